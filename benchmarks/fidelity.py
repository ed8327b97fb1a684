"""Runs every fixture, as written and as `--fix` writes it, on real CUDA and on the emulator.

`devlint confirm --backend both` checks the rule examples; this checks the emulator on the
640-odd fixtures, which exercise far more of torch, and on the probes in `fidelity_programs/`,
small programs that print what torch did (the devices a call gives back, what a forked child
may do). Each program runs once per backend with the same number of GPUs. A program differs
when its exit status or the type of the exception that ended it differs, or, for a probe, its
output; each difference is listed with both endings. Needs a machine with a GPU and the CUDA
build of torch:

    python benchmarks/fidelity.py --json fidelity.json [--gpus 1] [--limit N]

Fixtures are edge cases, often only definitions, so most simply exit 0 on both backends; a
difference is a place where the emulator and a real GPU disagree, or a program that depends on
what the machine has (files, packages, environment variables), and each needs reading.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devlint.config import Settings  # noqa: E402
from devlint.harness.runner import Job, Result, run_jobs  # noqa: E402
from devlint.harness.verdict import exception_of, first_line  # noqa: E402
from devlint.running.fix import fix_source  # noqa: E402

BACKENDS = ("cuda", "emulated")


PROBES = Path(__file__).resolve().parent / "fidelity_programs"


def programs(folder: Path) -> dict[str, Path]:
    """Each probe, each fixture and each fixed fixture (written to ``folder``), by name."""
    found = {path.relative_to(ROOT).as_posix(): path for path in sorted(PROBES.glob("*.py"))}
    for path in sorted((ROOT / "fixtures").glob("*/*.py")):
        name = path.relative_to(ROOT).as_posix()
        source = path.read_text(encoding="utf-8")
        found[name] = _write(folder / name, source)
        code = path.parent.name
        fixed = fix_source(source, name, Settings(extend_select=(code,)), unsafe=True)
        if fixed.problem is None and fixed.changed:
            found[name + " (fixed)"] = _write(folder / "fixed" / name, fixed.fixed)
    return found


def _write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    return path


def ending(result: Result) -> dict[str, object]:
    """How a run ended: exit status, exception, output, time."""
    kind, message = exception_of(result)
    return {
        "exit": "timeout" if result.timed_out else result.exit_status,
        "exception": kind,
        "message": first_line(message),
        "stdout": result.stdout[-2000:],
        "stderr": result.stderr[-3000:],
        "seconds": round(result.seconds, 2),
    }


def differs(name: str, left: dict[str, object], right: dict[str, object]) -> bool:
    if (left["exit"] == 0) != (right["exit"] == 0) or left["exception"] != right["exception"]:
        return True
    return name.startswith("benchmarks/") and left["stdout"] != right["stdout"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--gpus", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="the first N programs only")
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=60)
    options = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="devlint-fidelity-"))
    named = programs(folder)
    names = sorted(named)[: options.limit or None]
    jobs = [
        Job(named[name], backend, options.gpus, key=(name, backend))
        for name in names
        for backend in options.backends
    ]
    began = time.monotonic()
    os.chdir(folder)  # what the programs write stays in the scratch folder
    results = run_jobs(jobs, parallel=options.jobs, timeout=options.timeout)
    endings: dict[str, dict[str, object]] = {}
    for result in results:
        name, backend = result.job.key
        endings.setdefault(name, {})[backend] = ending(result)
    different = sorted(
        name
        for name, by_backend in endings.items()
        if len(by_backend) == 2 and differs(name, by_backend["cuda"], by_backend["emulated"])
    )
    for name, by_backend in endings.items():
        if name not in different:  # the outputs of the programs that agree are not kept
            for end in by_backend.values():
                del end["stdout"], end["stderr"]
    options.json.write_text(
        json.dumps({"gpus": options.gpus, "programs": endings, "different": different}, indent=1),
        encoding="utf-8",
    )
    for name in different:
        print(name)
        for backend in options.backends:
            end = endings[name][backend]
            print(f"  {backend:9} exit {end['exit']}  {end['exception']}: {end['message']}")
            if name.startswith("benchmarks/"):
                print("".join(f"    {line}\n" for line in str(end["stdout"]).splitlines()))
    print(
        f"{len(names)} programs on {', '.join(options.backends)}: {len(different)} differ"
        f" ({time.monotonic() - began:.0f} s)"
    )
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
