"""devlint against the LibCST parse floor, TorchFix and pyflakes, side by side in one run.

Usage::

    python benchmarks/compare.py PATH [PATH ...] [--repeat N] [--jobs N] [--only NAMES]
        [--flake8-python PYTHON] [--torchfix-python PYTHON] [--json OUT] [--markdown]

Every tool is a separate process given the same explicit list of ``*.py``
files under the paths (``benchmarks/bench.py``'s walk: no VCS, virtualenv or
cache folders), so start-up, imports and file reading count for all alike:

- ``parse floor``: ``libcst.parse_module`` over every file, nothing else.
  No LibCST-based linter can be faster; the other rows are ratios to it;
- ``devlint -j1``: ``devlint check --jobs 1 --no-cache``, the single-process
  figure the 1.5x target is about;
- ``devlint -jN cold`` and ``warm``: ``--jobs N`` with a fresh cache folder,
  then again over the unchanged files (the warm/cold ratio; target < 10%);
- ``flake8 --select F`` (pyflakes), ``-j1``, with the ``--flake8-python``
  interpreter's flake8;
- ``TorchFix`` (``flake8 --select TOR``), ``-j1``, with the
  ``--torchfix-python`` interpreter's flake8, when it has TorchFix;
- ``flake8 --select DVL``: devlint's own flake8 plugin, ``-j1``, when this
  interpreter's flake8 has it.

flake8 runs every installed plugin whatever ``--select`` says and filters the
reports afterwards: a flake8 that has TorchFix and devlint installed runs
both (and pycodestyle) in every row. So give each tool its own environment;
the notes printed above the table say which plugins each flake8 loaded::

    python -m venv /tmp/flake8-only && /tmp/flake8-only/bin/pip install flake8
    python -m venv /tmp/torchfix && /tmp/torchfix/bin/pip install flake8 torchfix
    python benchmarks/compare.py /path/to/project \
        --flake8-python /tmp/flake8-only/bin/python --torchfix-python /tmp/torchfix/bin/python

Each row reports wall seconds, CPU seconds (user + system of the process and
its workers), lines per wall second, the ratios of wall and of CPU time to
the floor's (on a busy machine the CPU ratio is the steadier), the peak
resident memory of the whole process tree (sampled every 10 ms,
worker processes summed) and the number of findings. Each tool runs
``--repeat`` times, interleaved; the fastest run is reported (``--median``: the
median run, as issue 34 measures speed), with the highest peak seen. Wall time
suffers from other load on the machine, CPU time much less: compare both, and
numbers taken on the same machine only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tokenize
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench import collect, count_lines

REPO_ROOT = Path(__file__).resolve().parent.parent
PARSE_FLOOR = "--parse-floor"
MAX_ARGUMENTS = 1_000_000  # bytes of file names on one command line; Linux allows 2 MB


@dataclass
class Tool:
    name: str
    command: list[str]
    findings: str  # how to count findings in its output: "json", "lines" or "none"
    env: dict[str, str] = field(default_factory=dict)
    before: str | None = None  # "fresh-cache": empty the cache folder before each run


@dataclass
class Run:
    wall: float
    cpu: float
    peak_rss: int  # bytes, the process tree's sampled peak
    exit_status: int
    findings: int | None


@dataclass
class Row:
    name: str
    command: str
    wall: float
    cpu: float
    peak_rss_mb: float
    findings: int | None
    lines_per_second: float
    ratio_to_floor: float | None = None
    cpu_ratio_to_floor: float | None = None
    note: str = ""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [PARSE_FLOOR]:  # this script, run as the floor's own process
        return parse_floor(Path(argv[1]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_argument("--repeat", type=int, default=1, metavar="N", help="runs per tool")
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, metavar="N", help="devlint -jN rows"
    )
    parser.add_argument(
        "--flake8-python",
        default=sys.executable,
        metavar="PYTHON",
        help="interpreter whose flake8 times --select F (default: this one)",
    )
    parser.add_argument(
        "--torchfix-python",
        default=sys.executable,
        metavar="PYTHON",
        help="interpreter whose flake8 has TorchFix (default: this one)",
    )
    parser.add_argument(
        "--only",
        metavar="NAMES",
        help="comma-separated rows to run, by the start of their name ('devlint -j2 cold')",
    )
    parser.add_argument(
        "--median",
        action="store_true",
        help="report each tool's median run (by wall time) instead of its fastest",
    )
    parser.add_argument("--json", metavar="OUT", help="also write the rows as JSON")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)

    files = collect(args.paths)
    if not files:
        sys.exit("compare: no *.py files found")
    names = [str(path) for path in files]
    if sum(len(name) + 1 for name in names) > MAX_ARGUMENTS:
        sys.exit("compare: too many files for one command line; measure fewer paths at a time")
    lines = sum(count_lines(_text(path)) for path in files)

    with tempfile.TemporaryDirectory(prefix="devlint-compare-") as scratch:
        file_list = Path(scratch, "files.txt")
        file_list.write_text("\n".join(names) + "\n", encoding="utf-8")
        cache = Path(scratch, "cache")
        tools, notes = _tools(args, names, file_list, cache)
        if args.only:
            wanted = [name.strip() for name in args.only.split(",")]
            tools = [tool for tool in tools if tool.name.startswith(tuple(wanted))]
        runs: dict[str, list[Run]] = {tool.name: [] for tool in tools}
        for _ in range(max(1, args.repeat)):
            for tool in tools:
                if tool.before == "fresh-cache":
                    shutil.rmtree(cache, ignore_errors=True)
                runs[tool.name].append(measure(tool))

    rows = _rows(tools, runs, lines, _median if args.median else _fastest)
    _print(rows, files, lines, args, notes)
    if args.markdown:
        print()
        print(markdown(rows))
    if args.json:
        report = {
            "python": platform.python_version(),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
            "paths": args.paths,
            "files": len(files),
            "lines": lines,
            "repeat": args.repeat,
            "jobs": args.jobs,
            "notes": notes,
            "rows": [asdict(row) for row in rows],
        }
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


def _tools(
    args: argparse.Namespace, names: list[str], file_list: Path, cache: Path
) -> tuple[list[Tool], list[str]]:
    python = sys.executable
    devlint = [python, "-m", "devlint", "check", "--exit-zero", "--format", "json"]
    here = {"PYTHONPATH": str(REPO_ROOT)}  # this checkout's devlint, installed or not
    tools = [
        Tool("parse floor", [python, __file__, PARSE_FLOOR, str(file_list)], "none"),
        Tool("devlint -j1", [*devlint, "--no-cache", "--jobs", "1", *names], "json", here),
        Tool(
            f"devlint -j{args.jobs} cold",
            [*devlint, "--cache-dir", str(cache), "--jobs", str(args.jobs), *names],
            "json",
            here,
            before="fresh-cache",
        ),
        Tool(
            f"devlint -j{args.jobs} warm",
            [*devlint, "--cache-dir", str(cache), "--jobs", str(args.jobs), *names],
            "json",
            here,
        ),
    ]
    notes: list[str] = []
    for label, interpreter, select in (
        ("flake8 --select F", args.flake8_python, "F"),
        ("TorchFix", args.torchfix_python, "TOR"),
    ):
        plugins = flake8_plugins(interpreter)
        if plugins is None:
            notes.append(f"{label} skipped: {interpreter} has no flake8")
            continue
        if select == "TOR" and "TorchFix" not in plugins:
            notes.append(f"{label} skipped: {interpreter}'s flake8 has no TorchFix")
            continue
        extra = sorted(set(plugins) - {"pyflakes", "pycodestyle", "mccabe"})
        notes.append(f"{label}: {interpreter}, flake8 plugins {', '.join(extra) or 'none'}")
        flake8 = [interpreter, "-m", "flake8", "--isolated", "-j", "1", "--exit-zero"]
        tools.append(Tool(label, [*flake8, "--select", select, *names], "lines"))
    own = flake8_plugins(python)
    if own is not None and "devlint" in own:
        flake8 = [python, "-m", "flake8", "--isolated", "-j", "1", "--exit-zero"]
        tools.append(
            Tool("flake8 --select DVL", [*flake8, "--select", "DVL", *names], "lines", here)
        )
    return tools, notes


def flake8_plugins(python: str) -> dict[str, str] | None:
    """``{plugin: version}`` of that interpreter's flake8, or None without flake8."""
    try:
        result = subprocess.run(
            [python, "-m", "flake8", "--version"], capture_output=True, text=True, timeout=60
        )
    except OSError:
        return None
    if result.returncode != 0:
        return None
    match = re.search(r"\((.*)\)", result.stdout)
    pairs = (item.split(":") for item in match.group(1).split(",")) if match else ()
    return {name.strip(): version.strip() for name, version in pairs}


def measure(tool: Tool) -> Run:
    """Run the tool once: wall and CPU time, the process tree's peak memory, findings."""
    env = {**os.environ, **tool.env}
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        process = subprocess.Popen(tool.command, stdout=output, stderr=subprocess.DEVNULL, env=env)
        sampler = PeakSampler(process.pid)
        sampler.start()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        sampler.stop()
        output.seek(0)
        text = output.read().decode("utf-8", "replace")
    peak = max(sampler.peak, usage.ru_maxrss * 1024)
    return Run(
        wall,
        usage.ru_utime + usage.ru_stime,
        peak,
        process.returncode,
        _findings(tool.findings, text),
    )


def _findings(kind: str, text: str) -> int | None:
    if kind == "json":
        try:
            return len(json.loads(text))
        except ValueError:
            return None
    if kind == "lines":
        return sum(1 for line in text.splitlines() if line.strip())
    return None


class PeakSampler(threading.Thread):
    """The largest sum of resident memory over a process and its descendants."""

    def __init__(self, pid: int, interval: float = 0.01) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self._done = threading.Event()
        self._page = os.sysconf("SC_PAGE_SIZE")

    def run(self) -> None:
        while not self._done.is_set():
            self.peak = max(self.peak, sum(self._rss(pid) for pid in self._tree()))
            self._done.wait(self.interval)

    def stop(self) -> None:
        self._done.set()
        self.join()

    def _tree(self) -> list[int]:
        found, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            try:
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children") as children:
                        todo += [int(child) for child in children.read().split()]
            except OSError:
                continue
        return found

    def _rss(self, pid: int) -> int:
        try:
            with open(f"/proc/{pid}/statm") as statm:
                return int(statm.read().split()[1]) * self._page
        except (OSError, IndexError, ValueError):
            return 0


def _fastest(runs: list[Run]) -> Run:
    return min(runs, key=lambda run: run.wall)


def _median(runs: list[Run]) -> Run:
    """The run in the middle by wall time (the slower of the two middle ones for an even
    count): what a user meets on a typical run, not on the luckiest."""
    return sorted(runs, key=lambda run: run.wall)[len(runs) // 2]


def _rows(
    tools: list[Tool], runs: dict[str, list[Run]], lines: int, pick: Callable[[list[Run]], Run]
) -> list[Row]:
    rows = []
    floor_runs = runs.get("parse floor", [])
    floor = pick(floor_runs).wall if floor_runs else 0.0
    floor_cpu = pick(floor_runs).cpu if floor_runs else 0.0
    for tool in tools:
        best = pick(runs[tool.name])
        failed = [run.exit_status for run in runs[tool.name] if run.exit_status != 0]
        rows.append(
            Row(
                tool.name,
                " ".join(tool.command[:8]) + (" ..." if len(tool.command) > 8 else ""),
                best.wall,
                best.cpu,
                max(run.peak_rss for run in runs[tool.name]) / 2**20,
                best.findings,
                lines / best.wall if best.wall else float("inf"),
                best.wall / floor if floor else None,
                best.cpu / floor_cpu if floor_cpu else None,
                f"exit status {failed[0]}" if failed else "",
            )
        )
    return rows


def _print(rows: list[Row], files: list[Path], lines: int, args, notes: list[str]) -> None:
    print(
        f"python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.1f}, {'median' if args.median else 'best'} of {args.repeat}"
    )
    print(f"{len(files)} files, {lines:,} lines under {', '.join(args.paths)}")
    for note in notes:
        print(f"note: {note}")
    print()
    header = (
        f"{'':22} {'wall s':>8} {'cpu s':>8} {'lines/s':>9} {'x floor':>8} {'cpu x':>6} "
        f"{'peak MB':>8} {'findings':>9}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        findings = "" if row.findings is None else str(row.findings)
        ratio = "" if row.ratio_to_floor is None else f"{row.ratio_to_floor:.2f}"
        cpu = "" if row.cpu_ratio_to_floor is None else f"{row.cpu_ratio_to_floor:.2f}"
        print(
            f"{row.name:22} {row.wall:8.2f} {row.cpu:8.2f} {row.lines_per_second:9,.0f} "
            f"{ratio:>8} {cpu:>6} {row.peak_rss_mb:8.0f} {findings:>9}  {row.note}"
        )


def markdown(rows: list[Row]) -> str:
    """The rows as a Markdown table, as pasted into docs/performance.md."""
    table = [
        "| tool | wall s | CPU s | lines/s | x floor | CPU x floor | peak RSS MB | findings |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        ratio = "" if row.ratio_to_floor is None else f"{row.ratio_to_floor:.2f}"
        cpu = "" if row.cpu_ratio_to_floor is None else f"{row.cpu_ratio_to_floor:.2f}"
        findings = "" if row.findings is None else str(row.findings)
        table.append(
            f"| {row.name} | {row.wall:.2f} | {row.cpu:.2f} | {row.lines_per_second:,.0f} "
            f"| {ratio} | {cpu} | {row.peak_rss_mb:.0f} | {findings} |"
        )
    return "\n".join(table)


def parse_floor(file_list: Path) -> int:
    """The floor itself: decode and ``libcst.parse_module`` every listed file."""
    import libcst

    for name in file_list.read_text(encoding="utf-8").splitlines():
        try:
            with open(name, "rb") as stream:
                encoding, _ = tokenize.detect_encoding(stream.readline)
                stream.seek(0)
                libcst.parse_module(stream.read().decode(encoding).removeprefix("\ufeff"))
        except Exception:  # unreadable, undecodable or unparsable: the others report it
            continue
    return 0


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


if __name__ == "__main__":
    sys.exit(main())
