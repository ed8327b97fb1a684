"""Which mutants really fail on a GPU: run each source's driver on the emulated CUDA.

Every mutant gets its own copy of the repository tree with the one file mutated; the
source's driver runs there under devlint's emulator (``devlint.harness.runner``: forked from
a server that imported torch once, each run in its own process group, killed at the
timeout). Results are cached by everything that decides them (driver, mutant text, the
emulator's code), so a re-run only runs what changed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from checkouts import mark_root
from inject import Mutant

from devlint.harness import runner

HERE = Path(__file__).resolve().parent
HARNESS = Path(runner.__file__).resolve().parent
RESULT_NAME = ".mutation-result.json"

DEVICE_ERRORS = re.compile(
    "|".join(
        [
            r"Expected all tensors to be on the same device",
            r"Input type \(.*cuda.*\) and weight type|Input type \(.*\) and weight type \(.*cuda",
            r"indices should be either on cpu or on the same device",
            r"can't convert cuda:?\d* device type tensor to numpy",
            r"Attempting to deserialize object on a CUDA device",
            r"'(DataParallel|DistributedDataParallel)' object has no attribute",
            r"expected self and mask to be on the same device",
            r"Trying to pass too many CPU scalars to non-CPU kernel",
            r"module must have its parameters and buffers on device",
            r"should be on the same device",
        ]
    )
)
"""PyTorch's own words for the failures the kinds cause (the emulator raises the same text)."""

ENVIRONMENT_ERRORS = re.compile(r"(ModuleNotFoundError|ImportError): ")
"""A driver failing on an import the scorer's environment lacks (``einops``): a fact about
this machine, not about the code, so never cached: installing the module is enough."""


@dataclass
class Outcome:
    status: str
    """``pass``, ``device-error``, ``other-error`` or ``timeout``."""
    error: str = ""
    lines: list[int] = field(default_factory=list)
    """The lines of the mutated file on the failure's stack (the call chain), innermost last."""
    seconds: float = 0.0


def cache_key(source: dict, path: str, text: str) -> str:
    parts = [
        source["repo"],
        source["commit"],
        str(source.get("gpus", 1)),
        path,
        text,
        (HERE / source["driver"]).read_text(),
        _instrument(),
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


@functools.cache
def _instrument() -> str:
    """What decides every run besides the driver: ``drive.py`` and the emulator's code."""
    files = [HERE / "drive.py", *sorted(HARNESS.rglob("*.py"))]
    return hashlib.sha256("\0".join(p.read_text() for p in files).encode()).hexdigest()


def tree_for(work: Path, source: dict, checkout: Path, path: str, text: str, name: str) -> Path:
    """A copy of ``checkout`` at ``work/<id>/<name>`` with ``path`` holding ``text``."""
    tree = work / source["id"] / name
    target = tree / path
    if not (target.is_file() and target.read_text(encoding="utf-8") == text):
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(checkout, tree, ignore=shutil.ignore_patterns(".mutation-run"))
        target.write_text(text, encoding="utf-8")
    mark_root(tree)  # trees copied before checkouts had one
    return tree


def read_cache(path: Path) -> dict[str, Outcome]:
    found: dict[str, Outcome] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                entry = json.loads(line)
                key = entry.pop("key")
                outcome = Outcome(**entry)
                if _cacheable(outcome):  # written before such failures stopped being cached
                    found[key] = outcome
    return found


def _cacheable(outcome: Outcome) -> bool:
    return not ENVIRONMENT_ERRORS.match(outcome.error)


def run(
    requests: list[tuple[str, dict, Path, str]],
    cache_path: Path,
    workers: int,
    timeout: float,
    progress: bool = True,
) -> dict[str, Outcome]:
    """Outcomes of ``(key, source, tree, mutated path)`` runs, from the cache or run now."""
    cache = read_cache(cache_path)
    todo = [r for r in requests if r[0] not in cache]
    todo = list({r[0]: r for r in todo}.values())
    jobs = [
        runner.Job(
            script=HERE / source["driver"],
            backend="emulated",
            gpus=int(source.get("gpus", 1)),
            args=(str(tree), path, str(tree / RESULT_NAME)),
            key=(key, tree),
            threads=1,
        )
        for key, source, tree, path in todo
    ]
    for _key, _source, tree, _path in todo:
        (tree / RESULT_NAME).unlink(missing_ok=True)
    done = [0]
    environment: set[str] = set()

    def record(result: runner.Result) -> None:
        key, tree = result.job.key
        outcome = _outcome(result, tree / RESULT_NAME)
        cache[key] = outcome
        if _cacheable(outcome):
            with open(cache_path, "a") as out:
                out.write(json.dumps({"key": key, **asdict(outcome)}) + "\n")
        else:
            environment.add(outcome.error)
        done[0] += 1
        if progress:
            print(f"  ran {done[0]}/{len(jobs)}: {outcome.status} {tree.name}", flush=True)

    if jobs:
        runner.run_jobs(jobs, workers, timeout, record)
    for error in sorted(environment):
        print(f"warning: drivers failed on this machine, not cached: {error}", file=sys.stderr)
    return {r[0]: cache[r[0]] for r in requests}


def _outcome(result: runner.Result, result_file: Path) -> Outcome:
    seconds = round(result.seconds, 1)
    if result.timed_out:
        return Outcome("timeout", seconds=seconds)
    failure = json.loads(result_file.read_text()) if result_file.exists() else None
    exception = result.report.exception
    if result.exit_status == 0 and failure is None and exception is None:
        return Outcome("pass", seconds=seconds)
    message = ""
    if failure is not None:
        message = f"{failure['type']}: {failure['message']}"
    elif exception is not None:
        message = f"{exception['type']}: {exception['message']}"
    else:
        message = result.stderr[-500:]
    device = bool(result.report.device_errors) or bool(DEVICE_ERRORS.search(message))
    lines = failure.get("lines", []) if failure else []
    return Outcome("device-error" if device else "other-error", message[:300], lines, seconds)


def original_request(
    work: Path, source: dict, checkout: Path, path: str
) -> tuple[str, dict, Path, str]:
    text = (checkout / path).read_text(encoding="utf-8")
    tree = tree_for(work, source, checkout, path, text, "original-" + _slug(path))
    return cache_key(source, path, text), source, tree, path


def mutant_request(
    work: Path, source: dict, checkout: Path, path: str, mutant: Mutant
) -> tuple[str, dict, Path, str]:
    name = f"{_slug(path)}-{mutant.kind}-{mutant.site}"
    tree = tree_for(work, source, checkout, path, mutant.source, name)
    return cache_key(source, path, mutant.source), source, tree, path


def _slug(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", path).strip("_")
