"""Pathological files finish in bounded memory, or are skipped with a notice that says why.

Every input is generated here. Without the limits, LibCST takes minutes or
gigabytes on several of them, or kills the process (3,000 nested brackets).
How fast they finish is measured by ``benchmarks/robustness.py --pathological``,
not asserted here: a loaded machine must not fail a test.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from devlint.inputs.limits import MAX_BYTES, complexity_problem
from devlint.notices import INTERNAL_ERROR, TOO_COMPLEX
from devlint.running.engine import lint_source

TORCH = "import torch\n"

OVER_THE_LIMITS = {
    "50,000-line file": "".join(f"x{i} = torch.zeros({i}).cuda() + y\n" for i in range(50_000)),
    "10 MB single line": "x = [" + "1, " * 3_500_000 + "]\n",
    "500 nested brackets": "x = " + "(" * 500 + "1" + ")" * 500 + "\n",
    "500 nested brackets after 400 stray closers": ")" * 400
    + "\nx = "
    + "(" * 500
    + "1"
    + ")" * 500
    + "\n",
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
def test_over_the_limits_is_skipped_with_a_notice(body: str) -> None:
    [diagnostic] = lint_source(TORCH + body, "big.py")
    assert diagnostic.code == TOO_COMPLEX
    assert diagnostic.message.endswith("(skipped)")
    assert "to analyse" in diagnostic.message


@pytest.mark.parametrize("body", WITHIN_THE_LIMITS.values(), ids=WITHIN_THE_LIMITS.keys())
def test_within_the_limits_is_analysed_in_bounded_memory(body: str) -> None:
    """Analysed (or, past Python's recursion limit, a DVL004), never an internal error."""
    source = TORCH + body
    code = """
import resource, sys
from devlint.running.engine import lint_source
source = sys.stdin.read()
codes = [d.code for d in lint_source(source, "m.py")]
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, codes)
"""
    result = subprocess.run(
        [sys.executable, "-c", code], input=source, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    peak_kib, codes = result.stdout.split(maxsplit=1)
    assert int(peak_kib) < 700 * 1024
    assert INTERNAL_ERROR not in codes


LONG_LITERALS = {
    "one-line string": "x = '" + "a" * 4_000_000 + "'\n",
    "one-line string of escapes": 'x = "' + "\\n" * 2_000_000 + '"\n',
    "escaped quotes": "x = '" + "\\'" * 2_000_000 + "'\n",
}


@pytest.mark.parametrize("body", LONG_LITERALS.values(), ids=LONG_LITERALS.keys())
def test_the_check_itself_takes_a_few_bytes_a_character(body: str) -> None:
    """A 4 MB literal: the check once built about 115 bytes of regex state per character
    (2.4 GB for 20 MB); a few copies of the text are all it may take."""
    code = """
import resource, sys
from devlint.inputs.limits import complexity_problem
source = sys.stdin.read()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
problem = complexity_problem(source)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before, problem)
"""
    result = subprocess.run(
        [sys.executable, "-c", code], input=body, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    growth_kib, problem = result.stdout.split(maxsplit=1)
    assert problem == "None\n"  # within every limit: the whole check ran
    assert int(growth_kib) * 1024 < 10 * len(body)


@pytest.mark.parametrize("character", ["a", "\u00e9"], ids=["ascii", "two-byte-utf-8"])
def test_a_file_over_the_size_limit_is_skipped_with_a_notice_naming_it(character: str) -> None:
    """Counted in UTF-8 bytes: 5 million two-byte characters are over a 10 MB limit."""
    comment = "# " + character * (MAX_BYTES // len(character.encode()) + 1) + "\n"
    [diagnostic] = lint_source(TORCH + comment, "big.py")
    assert diagnostic.code == TOO_COMPLEX
    assert f"over the limit of {MAX_BYTES:,}" in diagnostic.message
    assert diagnostic.message.startswith("file too large to analyse: ")


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
