"""No test asserts a duration: on a loaded machine it fails for nothing.

Speed is measured in ``benchmarks/``; tests assert what happens (a notice, a
result, a bound on memory). A hang guard (``timeout=`` on a subprocess, a
deadline while waiting for an event) is not an assertion on speed.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
CLOCKS = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns"}
DURATION_NAMES = re.compile(r"seconds|elapsed|duration|took", re.IGNORECASE)
ORDERINGS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def reads_a_clock_or_duration(node: ast.AST) -> bool:
    for part in ast.walk(node):
        if (
            isinstance(part, ast.Attribute)
            and part.attr in CLOCKS
            and isinstance(part.value, ast.Name)
            and part.value.id == "time"
        ):
            return True
        if isinstance(part, ast.Name) and DURATION_NAMES.search(part.id):
            return True
    return False


def timed_assertions(source: str) -> list[int]:
    """Lines of ``assert`` statements that order a clock reading or a duration."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Assert):
            continue
        for compare in ast.walk(node.test):
            if (
                isinstance(compare, ast.Compare)
                and any(isinstance(op, ORDERINGS) for op in compare.ops)
                and reads_a_clock_or_duration(compare)
            ):
                lines.append(node.lineno)
                break
    return lines


def test_the_detector_sees_the_forms_it_looks_for() -> None:
    check = "assert"  # spelled apart so that line-based greps for timed assertions skip the sample
    found = timed_assertions(
        "start = time.perf_counter()\n"
        f"{check} time.perf_counter() - start < 5\n"
        f"{check} float(seconds) < 10\n"
        f"{check} result.ok and time.monotonic() - started < 60\n"
        f"{check} len(items) < 5\n"
        f"{check} peak_kib < 700 * 1024\n"
    )
    assert found == [2, 3, 4]


def test_no_test_asserts_a_duration() -> None:
    offenders = [
        f"{path.name}:{line}"
        for path in sorted(TESTS.glob("*.py"))
        for line in timed_assertions(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
