"""What having devlint installed costs a flake8 run that selects no DVL code.

Usage::

    python benchmarks/flake8_overhead.py PATH [PATH ...] --without-python PYTHON
        [--with-python PYTHON] [--select CODES] [--repeat N] [--json OUT]

flake8 loads every installed plugin whatever ``--select`` says, so devlint's
plugin is imported and created for every file of a ``flake8 --select F`` run.
This script runs the same flake8 command over the same files (``bench.py``'s
walk) with two interpreters, interleaved ``--repeat`` times: one whose flake8
has devlint (``--with-python``, default: this one) and one whose flake8 has
the same plugins but not devlint, e.g.::

    python -m venv /tmp/flake8-only && /tmp/flake8-only/bin/pip install flake8
    python benchmarks/flake8_overhead.py /path/to/project \\
        --without-python /tmp/flake8-only/bin/python

It prints the best wall and CPU seconds of each and their ratio, with devlint
over without (target: 1.10 or less), and checks that both report the same
findings. Wall time suffers from other load on the machine, CPU time much
less: compare both.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

from bench import collect
from compare import MAX_ARGUMENTS, Run, Tool, flake8_plugins, measure

TARGET = 1.10  # flake8 with devlint installed over flake8 without, no DVL code selected


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_argument(
        "--without-python",
        required=True,
        metavar="PYTHON",
        help="interpreter whose flake8 lacks devlint",
    )
    parser.add_argument(
        "--with-python",
        default=sys.executable,
        metavar="PYTHON",
        help="interpreter whose flake8 has devlint (default: this one)",
    )
    parser.add_argument("--select", default="F", metavar="CODES", help="flake8 --select (F)")
    parser.add_argument("--repeat", type=int, default=5, metavar="N", help="runs of each")
    parser.add_argument("--json", metavar="OUT", help="also write the result as JSON")
    args = parser.parse_args(argv)

    files = [str(path) for path in collect(args.paths)]
    if not files:
        sys.exit("flake8_overhead: no *.py files found")
    if sum(len(name) + 1 for name in files) > MAX_ARGUMENTS:
        sys.exit("flake8_overhead: too many files for one command line; give fewer paths")
    with_plugins = flake8_plugins(args.with_python) or {}
    without_plugins = flake8_plugins(args.without_python) or {}
    if "devlint" not in with_plugins:
        sys.exit(f"flake8_overhead: {args.with_python}'s flake8 has no devlint plugin")
    if "devlint" in without_plugins:
        sys.exit(f"flake8_overhead: {args.without_python}'s flake8 has the devlint plugin")
    others = {name: version for name, version in with_plugins.items() if name != "devlint"}
    if others != without_plugins:
        print(f"warning: the plugins differ besides devlint: {others} vs {without_plugins}")

    # -I: neither the working directory nor PYTHONPATH may shadow the devlint each python has
    flake8 = ["-I", "-m", "flake8", "--isolated", "-j", "1", "--exit-zero", "--select", args.select]
    tools = {
        label: Tool(label, [python, *flake8, *files], "lines")
        for label, python in (("with devlint", args.with_python), ("without", args.without_python))
    }
    runs: dict[str, list[Run]] = {label: [] for label in tools}
    for _ in range(max(1, args.repeat)):
        for label, tool in tools.items():
            runs[label].append(measure(tool))

    best = {label: min(found, key=lambda run: run.wall) for label, found in runs.items()}
    cpu = {label: min(run.cpu for run in found) for label, found in runs.items()}
    wall_ratio = best["with devlint"].wall / best["without"].wall
    cpu_ratio = cpu["with devlint"] / cpu["without"]
    print(
        f"python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.1f}, best of {args.repeat}, flake8 --select {args.select}"
    )
    print(f"{len(files)} files under {', '.join(args.paths)}")
    for label, python in (("with devlint", args.with_python), ("without", args.without_python)):
        print(
            f"{label:13} {best[label].wall:7.2f} s wall {cpu[label]:7.2f} s cpu "
            f"{best[label].findings} findings  ({python})"
        )
    verdict = "within" if wall_ratio <= TARGET else "over"
    print(f"ratio wall {wall_ratio:.3f}, cpu {cpu_ratio:.3f} ({verdict} the {TARGET} target)")
    if best["with devlint"].findings != best["without"].findings:
        print("warning: the two runs report different findings")
    if args.json:
        report = {
            "python": platform.python_version(),
            "paths": args.paths,
            "files": len(files),
            "select": args.select,
            "repeat": args.repeat,
            "wall": {label: run.wall for label, run in best.items()},
            "cpu": cpu,
            "wall_ratio": wall_ratio,
            "cpu_ratio": cpu_ratio,
        }
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
