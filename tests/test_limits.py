"""Pathological files finish fast and small, or are skipped with a notice that says why.

Every input is generated here. Without the limits, LibCST takes minutes or
gigabytes on several of them, or kills the process (3,000 nested brackets).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from devlint.engine import lint_source
from devlint.limits import complexity_problem
from devlint.notices import INTERNAL_ERROR, TOO_COMPLEX

TORCH = "import torch\n"

OVER_THE_LIMITS = {
    "50,000-line file": "".join(f"x{i} = torch.zeros({i}).cuda() + y\n" for i in range(50_000)),
    "10 MB single line": "x = [" + "1, " * 3_500_000 + "]\n",
    "500 nested brackets": "x = " + "(" * 500 + "1" + ")" * 500 + "\n",
    "3,000 nested calls": "x = " + "f(" * 3_000 + ")" * 3_000 + "\n",
    "5,000 chained method calls": "x = torch.zeros(3)" + ".cuda()" * 5_000 + "\n",
    "chained calls, one per line": "x = (torch.zeros(3)\n" + "    .cuda()\n" * 2_000 + ")\n",
    "3,000 chained calls of calls": "x = f" + "(1)" * 3_000 + "\n",
    "3,000 chained subscripts": "x = t" + "[0]" * 3_000 + "\n",
    "15,000 `not`": "x = " + "not " * 15_000 + "t\n",
    "15,000 `and`": "x = t" + " and y" * 15_000 + "\n",
    "6,000 `+` over lines": "x = (t +\n" + "    y +\n" * 6_000 + "    1)\n",
    "6,000 conditional expressions": "x = " + "a if b else " * 6_000 + "c\n",
    "6,000 lambdas": "x = " + "lambda: " * 6_000 + "1\n",
}
WITHIN_THE_LIMITS = {
    "a 20,000-element flat list": "x = [" + "1, " * 20_000 + "]\n",
    "dict literal of 3,000 keys": "x = {"
    + ", ".join(f"'k{i}': [{i}, -{i}]" for i in range(3_000))
    + "}\n",
    "150 nested calls": "x = " + "f(" * 150 + ")" * 150 + "\n",
    "400 chained method calls": "x = torch.zeros(3)" + ".cuda()" * 400 + "\n",
    "900 `+`": "x = torch.zeros(3)" + " + y" * 900 + "\n",
    "brackets and operators in strings and comments": (
        "s = '" + "((((" * 100 + "'\n" + "# " + " + x" * 2_000 + "\n" + '"""' + "(" * 500 + '"""\n'
    ),
    "1 MB string literal": 'DOC = """' + "torch (((( " * 100_000 + '"""\n',
    "99 nested blocks": "".join("    " * i + "if x:\n" for i in range(99)) + "    " * 99 + "pass\n",
}


@pytest.mark.parametrize("body", OVER_THE_LIMITS.values(), ids=OVER_THE_LIMITS.keys())
def test_over_the_limits_is_skipped_at_once_with_a_notice(body: str) -> None:
    start = time.perf_counter()
    [diagnostic] = lint_source(TORCH + body, "big.py")
    assert time.perf_counter() - start < 5
    assert diagnostic.code == TOO_COMPLEX
    assert diagnostic.message.endswith("(skipped)")
    assert "to analyse" in diagnostic.message


@pytest.mark.parametrize("body", WITHIN_THE_LIMITS.values(), ids=WITHIN_THE_LIMITS.keys())
def test_within_the_limits_finishes_in_bounded_time_and_memory(body: str) -> None:
    """Analysed (or, past Python's recursion limit, a DVL004), never an internal error."""
    source = TORCH + body
    code = """
import resource, sys, time
from devlint.engine import lint_source
source = sys.stdin.read()
start = time.perf_counter()
codes = [d.code for d in lint_source(source, "m.py")]
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, codes)
"""
    result = subprocess.run(
        [sys.executable, "-c", code], input=source, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    seconds, peak_kib, codes = result.stdout.split(maxsplit=2)
    assert float(seconds) < 10
    assert int(peak_kib) < 700 * 1024
    assert INTERNAL_ERROR not in codes


def test_real_code_is_far_from_every_limit() -> None:
    """devlint's own sources and rule examples: the limits are for generated or hostile files."""
    root = Path(__file__).resolve().parent.parent
    for path in [*root.glob("devlint/**/*.py"), *root.glob("rules/*/*.py")]:
        assert complexity_problem(path.read_text(encoding="utf-8")) is None, path


def test_skipped_file_does_not_stop_a_run(tmp_path: Path) -> None:
    (tmp_path / "deep.py").write_text(TORCH + OVER_THE_LIMITS["3,000 nested calls"])
    (tmp_path / "buggy.py").write_text(TORCH + 'x = torch.ones(3)\nx.to("cuda")\n')
    result = subprocess.run(
        [sys.executable, "-m", "devlint", "check", "--no-cache", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("buggy.py:3:1: DVL201 ")
    assert lines[1] == (
        "deep.py:1:1: DVL004 [error] "
        "brackets nested too deeply to analyse: over 200 levels (skipped)"
    )
