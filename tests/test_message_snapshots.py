"""Every finding's full message on the rule examples and fixtures, pinned for review.

The marker tests prove which lines are reported; this file proves what each
finding says, where it starts and ends and how severe it is, so that an analysis
change that rewords a message or moves a span shows up as a diff to review.
After reviewing a deliberate change, rewrite the snapshot with
``python -m pytest tests/test_message_snapshots.py --update-snapshots``.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from test_examples import EXAMPLES, FIXTURE_FILES, _lint, _relative

SNAPSHOT = Path(__file__).resolve().parent / "snapshots" / "findings.txt"


def _findings_text() -> str:
    """One block per file with findings: a line per finding, sorted by position."""
    blocks = []
    for path in sorted(EXAMPLES + FIXTURE_FILES):
        diagnostics = _lint(path, path.read_text(encoding="utf-8"))
        if not diagnostics:
            continue
        lines = [f"## {_relative(path)}"]
        for d in sorted(diagnostics, key=lambda d: (d.line, d.column, d.code)):
            span = f"{d.line}:{d.column + 1}-{d.end_line}:{d.end_column + 1}"
            lines.append(f"{span} {d.code} {d.severity.value}: {d.message}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def test_findings_match_the_reviewed_snapshot(request: pytest.FixtureRequest) -> None:
    current = _findings_text()
    if request.config.getoption("--update-snapshots"):
        SNAPSHOT.write_text(current, encoding="utf-8")
    pinned = SNAPSHOT.read_text(encoding="utf-8") if SNAPSHOT.is_file() else ""
    diff = "".join(
        difflib.unified_diff(
            pinned.splitlines(keepends=True),
            current.splitlines(keepends=True),
            "tests/snapshots/findings.txt (reviewed)",
            "current output",
        )
    )
    assert not diff, "findings changed; review, then run with --update-snapshots:\n" + diff
