"""devlint over a large body of real code, and over pathological inputs: no internal errors.

Usage::

    python benchmarks/robustness.py PATH [PATH ...] [--jobs N] [--min-lines 500000]
    python benchmarks/robustness.py --pathological [--scale 1]

With paths, every ``*.py`` file under them is linted with every rule enabled,
in ``--jobs`` worker processes, each file timed on its own. The report gives
the files and lines, the findings per code, the notices (DVL001 syntax, DVL002
unreadable, DVL003 internal error, DVL004 over a limit) with their files, the
slowest files, and the peak memory of the workers. It exits 1 if there was an
internal error (DVL003) or a worker died, or if fewer than ``--min-lines``
lines were read (the issue asks for at least 500,000; fetch real projects for
it, never commit them).

With ``--pathological``, each generated pathological input (a 50,000-line
file, 500 nested brackets, a 10 MB line, 5,000 chained method calls, a 20 MB
string literal, literals just under the size limit, and the other forms that
break LibCST or once broke the limits check) is linted in a fresh process with a time limit,
reporting its time, peak memory and outcome; ``--scale`` multiplies their
sizes. Anything that takes longer than 10 s, more than 500 MB, or crashes fails.
The same inputs at CI-friendly sizes are in ``tests/test_limits.py``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench import collect, count_lines  # noqa: E402

from devlint.config import Settings  # noqa: E402
from devlint.inputs.limits import MAX_BYTES  # noqa: E402
from devlint.running.engine import lint_file  # noqa: E402

EVERY_RULE = Settings(select=("DVL",))
NOTICES = {
    "DVL001": "cannot parse",
    "DVL002": "cannot read",
    "DVL003": "INTERNAL ERROR",
    "DVL004": "over a limit",
}
SECONDS_LIMIT = 10.0
MEMORY_LIMIT_MB = 500


def lint_one(path: str) -> tuple[str, int, float, list[tuple[str, str]], int]:
    """(path, lines, seconds, [(code, message)], this worker's peak RSS in KiB so far)."""
    try:
        lines = count_lines(Path(path).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        lines = 0
    start = time.perf_counter()
    diagnostics = lint_file(Path(path), EVERY_RULE)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return path, lines, seconds, [(d.code, d.message) for d in diagnostics], peak


def real_code(args: argparse.Namespace) -> int:
    files = [str(path) for path in collect(args.paths)]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lint_one, files, chunksize=8))
    wall = time.perf_counter() - started
    lines = sum(result[1] for result in results)
    codes: collections.Counter[str] = collections.Counter()
    notices: dict[str, list[str]] = collections.defaultdict(list)
    for path, _, _, diagnostics, _ in results:
        for code, message in diagnostics:
            codes[code] += 1
            if code in NOTICES:
                notices[code].append(f"{path}: {message}")
    print(f"{len(files):,} files, {lines:,} lines, {wall:.1f} s with {args.jobs} workers")
    print(f"findings per code: {', '.join(f'{c}={n}' for c, n in sorted(codes.items()))}")
    for code, label in NOTICES.items():
        print(f"{code} ({label}): {len(notices.get(code, []))}")
        for entry in notices.get(code, [])[: args.show]:
            print(f"    {entry}")
    print("slowest files:")
    for path, size, seconds, _, _ in sorted(results, key=lambda r: -r[2])[: args.show]:
        print(f"    {seconds:6.2f} s  {size:6,} lines  {path}")
    peak = max((result[4] for result in results), default=0) / 1024
    print(f"largest worker peak RSS: {peak:.0f} MB")
    if args.json:
        summary = {
            "files": len(files),
            "lines": lines,
            "seconds": wall,
            "jobs": args.jobs,
            "findings": dict(codes),
            "notices": notices,
            "worker_peak_rss_mb": peak,
        }
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    failed = bool(notices.get("DVL003"))
    if lines < args.min_lines:
        print(f"FAILED: only {lines:,} lines, fewer than --min-lines {args.min_lines:,}")
        failed = True
    print("FAILED: internal errors" if notices.get("DVL003") else "no internal errors")
    return 1 if failed else 0


def pathological_inputs(scale: int) -> dict[str, str]:
    """Name → source of each input, ``scale`` times the issue's sizes."""
    n = scale
    return {
        "50,000-line file": "".join(
            f"x{i} = torch.zeros({i}).cuda() + y\n" for i in range(50_000 * n)
        ),
        "10 MB single line": "x = [" + "1, " * (3_500_000 * n) + "]\n",
        "500 nested brackets": "x = " + "(" * 500 * n + "1" + ")" * 500 * n + "\n",
        "3,000 nested calls": "x = " + "f(" * 3_000 * n + ")" * 3_000 * n + "\n",
        "5,000 chained method calls": "x = torch.zeros(3)" + ".cuda()" * 5_000 * n + "\n",
        "5,000 chained calls, one per line": "x = (torch.zeros(3)\n"
        + "    .cuda()\n" * 5_000 * n
        + ")\n",
        "15,000 `not`": "x = " + "not " * 15_000 * n + "t\n",
        "15,000 `and`": "x = t" + " and y" * 15_000 * n + "\n",
        "15,000 `+`": "x = t" + " + y" * 15_000 * n + "\n",
        "15,000 `**`": "x = t" + " ** y" * 15_000 * n + "\n",
        "6,000 conditional expressions": "x = " + "a if b else " * 6_000 * n + "c\n",
        "6,000 lambdas": "x = " + "lambda: " * 6_000 * n + "1\n",
        "99 nested blocks": "".join(" " * i + "if x:\n" for i in range(99)) + " " * 99 + "pass\n",
        "1 MB docstring": '"""' + "torch (((( " * 100_000 * n + '"""\n',
        "20 MB one-line string literal": "x = '" + "a" * 20_000_000 * n + "'\n",
        "string literal just under the size limit": "x = '" + "a" * (MAX_BYTES - 100) + "'\n",
        "escaped quotes just under the size limit": "x = '"
        + "\\'" * ((MAX_BYTES - 100) // 2)
        + "'\n",
        "100,000 short statements on one line": "; ".join(["x = 1"] * 100_000 * n) + "\n",
        "20,000 functions": "".join(
            f"def f{i}(x):\n    return torch.zeros(1, device=x.device)\n" for i in range(20_000 * n)
        ),
    }


PROBE = """
import resource, sys, time
from devlint.running.engine import lint_source
source = sys.stdin.read()
start = time.perf_counter()
diagnostics = lint_source(source, "input.py")
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
codes = sorted({d.code for d in diagnostics})
notice = next((d.message for d in diagnostics if d.code.startswith("DVL00")), "")
print(f"{seconds:.2f}\\t{peak}\\t{','.join(codes) or '-'}\\t{notice}")
"""


def pathological(args: argparse.Namespace) -> int:
    failed = False
    print(f"{'input':40} {'seconds':>8} {'peak MB':>8}  outcome")
    for name, body in pathological_inputs(args.scale).items():
        source = "import torch\n" + body
        try:
            result = subprocess.run(
                [sys.executable, "-c", PROBE],
                input=source,
                capture_output=True,
                text=True,
                timeout=60,
                cwd=REPO_ROOT,
            )
        except subprocess.TimeoutExpired:
            print(f"{name:40} {'>60':>8} {'':>8}  FAILED: timed out")
            failed = True
            continue
        if result.returncode != 0:
            print(f"{name:40} {'':>8} {'':>8}  FAILED: exit status {result.returncode}")
            failed = True
            continue
        seconds, peak, codes, notice = result.stdout.rstrip("\n").split("\t")
        bad = float(seconds) > SECONDS_LIMIT or int(peak) > MEMORY_LIMIT_MB or "DVL003" in codes
        failed |= bad
        outcome = f"{codes} {notice}".strip()
        print(f"{name:40} {seconds:>8} {peak:>8}  {'FAILED: ' if bad else ''}{outcome}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("paths", nargs="*", metavar="PATH")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--min-lines", type=int, default=500_000)
    parser.add_argument("--show", type=int, default=10, help="files listed per category")
    parser.add_argument("--json", metavar="OUT", help="also write the totals as JSON")
    parser.add_argument("--pathological", action="store_true")
    parser.add_argument("--scale", type=int, default=1)
    args = parser.parse_args(argv)
    if args.pathological:
        return pathological(args)
    if not args.paths:
        parser.error("give the paths of real code to lint, or --pathological")
    return real_code(args)


if __name__ == "__main__":
    sys.exit(main())
