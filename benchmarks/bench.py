"""Throughput of devlint against LibCST's bare parser, on a corpus of real code.

Usage::

    python benchmarks/bench.py PATH [PATH ...] [--repeat N] [--profile] [--json OUT]

All ``*.py`` files under the paths (skipping ``.git``, virtual environments and
caches) are read and decoded into memory first, so disk speed is not measured.
Then, in one process, up to three kinds of work are timed on every file:

(a) ``libcst.parse_module(source)``: the floor, since devlint parses with
    LibCST too;
(b) ``devlint.running.engine.lint_source(source, path)``: everything devlint does per
    file (pre-filter, parse, analysis, rules, noqa), each file on its own (what
    it imports unknown);
(c) the same in view of each file's project, as ``devlint check`` runs: a
    fresh project index per project and per repeat (a cold run), fed the
    in-memory sources, so the imported modules' reading, parsing and top-level
    runs are timed in the files that first import them. A file both linted
    and imported is parsed once. Its headline ratio is over all files (the
    pre-filter skips a non-torch file, but its importers may still need it):
    the target is 1.5 too.

The three run back to back on each file (their order turns from file to file
and from repeat to repeat), so a file's parse and its lint meet the same load.
On a shared machine the same work drifts far within seconds (one project's
parse pass took 13 to 20 s in one process), so a whole pass against another
measures the machine more than devlint. Each file's time is its best over the
N repeats, except the cyclic garbage collector's share: that part is timed
apart and averaged, since collections are real work that falls on different
files in different repeats and a per-file minimum would drop them. The totals
are sums over files.

Every call is timed with ``time.perf_counter``. ``lint_source`` skips files
that do not contain the substring ``torch`` without parsing them, so the files
and lines that are actually analysed are reported apart from those skipped,
and the headline ratio devlint/parse compares like with like: both over the
analysed files only (target: 1.5 or less). Files LibCST cannot parse are
counted and left out of every pass.

For the tools side by side (TorchFix, pyflakes, devlint with workers and
cache), each as its own process with its peak memory, see
``benchmarks/compare.py``; how to run both is in ``docs/performance.md``.

Why this is a script and not a timed unit test: wall-clock numbers depend on
the machine, its load and the corpus, so an assertion on them would be flaky
in CI and meaningless on a laptop. Run it by hand on a fixed corpus when
changing the analysis, and compare numbers taken on the same machine.
``--profile`` runs one devlint pass under cProfile and prints the top 25
functions by cumulative time, to find hot spots (cProfile slows Python code
much more than LibCST's native parser, so read its numbers as proportions).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import sys
import time
import tokenize
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

REPO_ROOT = Path(__file__).resolve().parent.parent
TARGET = 1.5  # devlint's time over the parse floor's, on the analysed files
SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".env",
    "env",
    ".tox",
    ".nox",
    "__pycache__",
    "site-packages",
    "node_modules",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "build",
    "dist",
}


@dataclass
class Source:
    path: str
    text: str
    lines: int
    analysed: bool  # lint_source's own pre-filter: the file mentions "torch"


@dataclass
class Timing:
    """Seconds of one pass: over all files, and over the analysed/skipped subsets."""

    total: float = 0.0
    analysed: float = 0.0
    skipped: float = 0.0


def collect(paths: list[str]) -> list[Path]:
    """Every ``*.py`` file under the paths, sorted, without VCS/venv/cache folders."""
    found: set[Path] = set()
    for arg in paths:
        root = Path(arg)
        if root.is_file():
            found.add(root)
            continue
        if not root.is_dir():
            sys.exit(f"bench: no such file or directory: {arg}")
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d not in SKIP_DIRS and not (Path(dirpath, d) / "pyvenv.cfg").exists()
            )
            found.update(Path(dirpath, f) for f in filenames if f.endswith(".py"))
    return sorted(found)


def decode(data: bytes) -> str | None:
    """Text of a Python file (PEP 263 cookie, BOM), or None if it cannot be decoded."""
    if b"\x00" in data:
        return None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding).removeprefix("\ufeff")
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None


def count_lines(text: str) -> int:
    """Lines as ``wc -l`` would count them, plus an unterminated last line."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def load(files: list[Path]) -> tuple[list[Source], list[str], list[str]]:
    """Read everything into memory; drop (and name) undecodable and unparsable files."""
    sources: list[Source] = []
    undecodable: list[str] = []
    unparsable: list[str] = []
    for file in files:
        try:
            text = decode(file.read_bytes())
        except OSError:
            text = None
        if text is None:
            undecodable.append(str(file))
            continue
        try:
            cst.parse_module(text)  # also warms the parser up before timing
        except Exception:  # ParserSyntaxError and assorted odd-input errors
            unparsable.append(str(file))
            continue
        sources.append(Source(str(file), text, count_lines(text), "torch" in text))
    return sources, undecodable, unparsable


class Stopwatch:
    """Times one call, and apart from it the cyclic garbage collector's share of it."""

    def __init__(self) -> None:
        self.collecting = 0.0  # seconds spent in collections so far
        self._started = 0.0
        gc.callbacks.append(self._on_collection)

    def _on_collection(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.collecting += time.perf_counter() - self._started

    def time(self, work, source: Source) -> tuple[float, float]:
        """Seconds of ``work(source)``: in all, and of that in collections."""
        collected_before = self.collecting
        start = time.perf_counter()
        work(source)
        elapsed = time.perf_counter() - start
        return elapsed, self.collecting - collected_before


class PerFile:
    """One kind of work's times on every file over the repeats: each file's best
    time without collections, and its collections' time summed (for their mean)."""

    def __init__(self, files: int) -> None:
        self.best = [float("inf")] * files
        self.collecting = [0.0] * files
        self.repeats = 0

    def record(self, index: int, elapsed: float, collecting: float) -> None:
        self.best[index] = min(self.best[index], elapsed - collecting)
        self.collecting[index] += collecting

    def timing(self, sources: list[Source]) -> Timing:
        timing = Timing()
        for index, source in enumerate(sources):
            seconds = self.best[index] + self.collecting[index] / self.repeats
            if source.analysed:
                timing.analysed += seconds
            else:
                timing.skipped += seconds
        timing.total = timing.analysed + timing.skipped
        return timing


def time_interleaved(sources: list[Source], works_per_repeat, repeat: int) -> dict[str, Timing]:
    """Each kind of work from ``works_per_repeat(i)`` (name -> callable, fresh for
    repeat i) run back to back on each file, in an order that turns; best of N."""
    stopwatch = Stopwatch()
    measured: dict[str, PerFile] = {}
    for i in range(repeat):
        works = list(works_per_repeat(i).items())
        gc.collect()
        for index, source in enumerate(sources):
            for turn in range(len(works)):
                name, work = works[(index + i + turn) % len(works)]
                per_file = measured.setdefault(name, PerFile(len(sources)))
                per_file.record(index, *stopwatch.time(work, source))
        for per_file in measured.values():
            per_file.repeats += 1
    return {name: per_file.timing(sources) for name, per_file in measured.items()}


def import_lint_source():
    """``devlint.running.engine.lint_source`` from this checkout (else an installed one)."""
    sys.path.insert(0, str(REPO_ROOT))
    try:
        from devlint.running.engine import lint_source
    except Exception as error:  # any import failure: keep the parse numbers
        return None, f"{type(error).__name__}: {error}"
    return lint_source, ""


def project_pass(sources: list[Source], findings: dict[str, int], repeat: int):
    """The work of pass (c): each file linted in view of its project, through a fresh
    index per project that reads the in-memory sources (findings counted on the first)."""
    from devlint.config import DEFAULT_SETTINGS
    from devlint.project.finder import Project, project_root
    from devlint.project.index import ProjectIndex
    from devlint.running.engine import lint_source

    indexes: dict[Path, ProjectIndex] = {}
    for source in sources:
        root = project_root(Path(source.path))
        if root not in indexes:
            indexes[root] = ProjectIndex(Project(root), DEFAULT_SETTINGS)
        indexes[root].set_text(Path(source.path), source.text)
    roots = {source.path: project_root(Path(source.path)) for source in sources}

    def work(source: Source) -> None:
        importer = indexes[roots[source.path]].importer_for(Path(source.path))
        for diagnostic in lint_source(source.text, source.path, importer=importer):
            if repeat == 0:
                findings[diagnostic.code] = findings.get(diagnostic.code, 0) + 1

    return work


def rate(lines: int, seconds: float) -> float:
    return lines / seconds if seconds > 0 else float("inf")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Time devlint's per-file work against bare libcst.parse_module."
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to read")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        metavar="N",
        help="timed repeats; each file's best is summed (default 3)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also run one devlint pass under cProfile, print top 25 cumulative",
    )
    parser.add_argument(
        "--python-gc",
        action="store_true",
        help="keep Python's collector thresholds (default: devlint check's, for every "
        "pass, the parse floor included)",
    )
    parser.add_argument("--json", metavar="OUT", help="write the numbers as JSON to OUT")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    files = collect(args.paths)
    sources, undecodable, unparsable = load(files)
    if not sources:
        sys.exit("bench: no parsable *.py files found")
    analysed = [s for s in sources if s.analysed]
    n_lines = sum(s.lines for s in sources)
    a_lines = sum(s.lines for s in analysed)
    s_lines = n_lines - a_lines

    lint_source, import_error = import_lint_source()
    n_rules = None
    if lint_source is not None:
        from devlint.rules import all_rules  # imported fine if the engine did

        n_rules = len(all_rules())
        if not args.python_gc:  # as `devlint check` runs, which the targets are about
            from devlint.running import gc_thresholds

            gc_thresholds.for_whole_process()

    def parse(source: Source) -> None:
        cst.parse_module(source.text)

    findings: dict[str, int] = {}
    project_findings: dict[str, int] = {}

    def works(i: int) -> dict[str, object]:
        """The work of repeat i; findings are counted on the first repeat."""

        def lint(source: Source) -> None:
            for diagnostic in lint_source(source.text, source.path):
                if i == 0:
                    findings[diagnostic.code] = findings.get(diagnostic.code, 0) + 1

        if lint_source is None:
            return {"parse": parse}
        return {"parse": parse, "lint": lint, "project": project_pass(sources, project_findings, i)}

    timings = time_interleaved(sources, works, args.repeat)
    parse_t = timings["parse"]
    lint_t = timings.get("lint")
    project_t = timings.get("project")

    print(
        f"python {platform.python_version()} ({platform.python_implementation()}), "
        f"libcst {_libcst_version()}, each file's best of {args.repeat} (collections averaged), "
        f"collector thresholds {gc.get_threshold()}"
    )
    print(
        f"files: {len(files)} found, {len(sources)} measured, "
        f"{len(unparsable)} unparsable and {len(undecodable)} undecodable left out"
    )
    for name in unparsable + undecodable:
        print(f"  left out: {name}")
    print(
        f"analysed (contain 'torch'): {len(analysed)} files, {a_lines} lines; "
        f"skipped by devlint's pre-filter: {len(sources) - len(analysed)} files, {s_lines} lines"
    )
    print()
    header = f"{'':28} {'files':>6} {'lines':>8} {'seconds':>9} {'lines/s':>10}"
    print(header)
    print("-" * len(header))

    def row(label: str, files_: int, lines: int, seconds: float) -> None:
        print(f"{label:28} {files_:>6} {lines:>8} {seconds:>9.3f} {rate(lines, seconds):>10.0f}")

    row("parse, all files", len(sources), n_lines, parse_t.total)
    row("parse, analysed files", len(analysed), a_lines, parse_t.analysed)
    if lint_t is not None:
        row("devlint, all files", len(sources), n_lines, lint_t.total)
        row("devlint, analysed files", len(analysed), a_lines, lint_t.analysed)
        row("devlint, skipped files", len(sources) - len(analysed), s_lines, lint_t.skipped)
        ratio = lint_t.analysed / parse_t.analysed if parse_t.analysed else float("nan")
        ratio_all = lint_t.total / parse_t.total
        print()
        print(
            f"ratio devlint/parse, analysed files: {ratio:.2f}  "
            f"({'within' if ratio <= TARGET else 'ABOVE'} the {TARGET} target)"
        )
        print(
            f"ratio devlint/parse, all files:      {ratio_all:.2f}  "
            "(flattered by pre-filtered files)"
        )
        print(
            f"rules: {n_rules}; findings per code (one pass): "
            + (", ".join(f"{k}={v}" for k, v in sorted(findings.items())) or "none")
        )
        if project_t is not None:
            row("devlint, whole projects", len(sources), n_lines, project_t.total)
            project_ratio = project_t.total / parse_t.total
            print(
                f"ratio devlint in view of the project/parse, all files: {project_ratio:.2f}  "
                f"({'within' if project_ratio <= TARGET else 'ABOVE'} the {TARGET} target); "
                f"analysed files: {project_t.analysed / parse_t.analysed:.2f}"
            )
            print(
                "findings per code in view of the project (one pass): "
                + (", ".join(f"{k}={v}" for k, v in sorted(project_findings.items())) or "none")
            )
        if not n_rules:
            print(
                "WARNING: no rules are registered, so lint_source returns before parsing "
                "and the devlint numbers measure nothing"
            )
        if findings.get("DVL003"):
            print(
                f"WARNING: {findings['DVL003']} files hit internal errors (DVL003); "
                "their analysis stopped early, which flatters the devlint numbers"
            )
    else:
        print()
        print(f"devlint not measured: cannot import devlint.running.engine ({import_error})")

    if args.profile and lint_source is not None:
        print()
        print("cProfile of one devlint pass over all files, top 25 by cumulative time:")
        profiler = cProfile.Profile()
        profiler.enable()
        for source in sources:
            lint_source(source.text, source.path)
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative").print_stats(25)
    elif args.profile:
        print("--profile skipped: devlint could not be imported")

    if args.json:
        result: dict[str, object] = {
            "python": platform.python_version(),
            "libcst": _libcst_version(),
            "collector_thresholds": list(gc.get_threshold()),
            "repeat": args.repeat,
            "paths": args.paths,
            "files_found": len(files),
            "files_measured": len(sources),
            "lines_measured": n_lines,
            "unparsable": unparsable,
            "undecodable": undecodable,
            "analysed": {"files": len(analysed), "lines": a_lines},
            "skipped": {"files": len(sources) - len(analysed), "lines": s_lines},
            "parse": _timing_json(parse_t, n_lines, a_lines, s_lines),
            "devlint": None,
            "devlint_import_error": import_error or None,
        }
        if lint_t is not None:
            result["devlint"] = _timing_json(lint_t, n_lines, a_lines, s_lines)
            result["ratio_analysed"] = (
                lint_t.analysed / parse_t.analysed if parse_t.analysed else None
            )
            result["ratio_all"] = lint_t.total / parse_t.total
            result["rules"] = n_rules
            result["findings"] = findings
        if project_t is not None:
            result["devlint_project"] = _timing_json(project_t, n_lines, a_lines, s_lines)
            result["ratio_project_all"] = project_t.total / parse_t.total
            result["ratio_project_analysed"] = (
                project_t.analysed / parse_t.analysed if parse_t.analysed else None
            )
            result["findings_project"] = project_findings
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


def _timing_json(t: Timing, n_lines: int, a_lines: int, s_lines: int) -> dict[str, object]:
    def per_second(lines: int, seconds: float) -> float | None:
        return lines / seconds if seconds > 0 else None  # JSON has no Infinity

    return {
        "seconds_all": t.total,
        "seconds_analysed": t.analysed,
        "seconds_skipped": t.skipped,
        "lines_per_second_all": per_second(n_lines, t.total),
        "lines_per_second_analysed": per_second(a_lines, t.analysed),
        "lines_per_second_skipped": per_second(s_lines, t.skipped),
    }


def _libcst_version() -> str:
    try:
        from importlib.metadata import version

        return version("libcst")
    except Exception:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
