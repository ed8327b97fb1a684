"""Everything devlint writes about the rule examples and fixtures, pinned for review.

The marker tests prove which lines are reported; these files prove what each
finding says, where it starts and ends, how severe it is, and what its fix
writes (title, safety and every edit), as ruff's snapshots carry the fix diff.
There is one file per rule (its examples and its fixtures), one for the
multi-file projects (each file linted in view of its project) and one for the
notebooks, so an analysis change that rewords a message, moves a span or
changes a fix shows up as a diff in the rules it touches. After reviewing a
deliberate change, rewrite them with
``python -m pytest tests/test_message_snapshots.py --update-snapshots``.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from test_examples import EXAMPLES, FIXTURE_FILES, FIXTURES, ROOT, _lint, _relative

from devlint.config import DEFAULT_SETTINGS
from devlint.diagnostic import Diagnostic
from devlint.notebooks.linting import lint_notebook_file
from devlint.running.engine import lint_file

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
PROJECT_FILES = sorted((FIXTURES / "projects").rglob("*.py"))
NOTEBOOKS = sorted((FIXTURES / "notebooks").glob("*.ipynb"))


def _snapshot_of(path: Path) -> str:
    """The snapshot a file's findings go to: its rule's, the projects' or the notebooks'."""
    relative = path.relative_to(ROOT).parts
    if relative[0] == "rules":
        return relative[1].split("-", 1)[0]
    return relative[1]  # fixtures/<CODE>/, fixtures/projects/, fixtures/notebooks/


def _diagnostics(path: Path) -> list[Diagnostic]:
    name = _relative(path)
    if path.suffix == ".ipynb":
        return lint_notebook_file(path, DEFAULT_SETTINGS, name)[0]
    if path.is_relative_to(FIXTURES / "projects"):
        return lint_file(path, DEFAULT_SETTINGS, name)
    return _lint(path, path.read_text(encoding="utf-8"))


def _finding_lines(d: Diagnostic) -> list[str]:
    """The finding, then its fix: title, safety, and each edit as span and new text."""
    cell = f"cell {d.cell} " if d.cell is not None else ""
    span = f"{d.line}:{d.column + 1}-{d.end_line}:{d.end_column + 1}"
    lines = [f"{cell}{span} {d.code} {d.severity.value}: {d.message}"]
    if d.fix is not None:
        safety = "safe" if d.fix.safe else "unsafe"
        lines.append(f"    fix ({safety}): {d.fix.title}")
        for edit in d.fix.edits:
            where = f"{edit.line}:{edit.column + 1}-{edit.end_line}:{edit.end_column + 1}"
            lines.append(f"      {where} -> {edit.text!r}")
    return lines


def _snapshots() -> dict[str, str]:
    """Each snapshot's text: one block per file with findings, sorted by position."""
    blocks: dict[str, list[str]] = {}
    for path in sorted(EXAMPLES + FIXTURE_FILES + PROJECT_FILES + NOTEBOOKS):
        diagnostics = _diagnostics(path)
        if not diagnostics:
            continue
        lines = [f"## {_relative(path)}"]
        order = sorted(diagnostics, key=lambda d: (d.cell or 0, d.line, d.column, d.code))
        for d in order:
            lines.extend(_finding_lines(d))
        blocks.setdefault(_snapshot_of(path), []).append("\n".join(lines))
    return {name: "\n\n".join(text) + "\n" for name, text in blocks.items()}


def test_findings_and_fixes_match_the_reviewed_snapshots(request: pytest.FixtureRequest) -> None:
    current = _snapshots()
    if request.config.getoption("--update-snapshots"):
        for stale in SNAPSHOTS.glob("*.txt"):
            stale.unlink()
        for name, text in current.items():
            (SNAPSHOTS / f"{name}.txt").write_text(text, encoding="utf-8")
    pinned = {path.stem: path.read_text(encoding="utf-8") for path in SNAPSHOTS.glob("*.txt")}
    diffs = []
    for name in sorted(set(current) | set(pinned)):
        diffs.extend(
            difflib.unified_diff(
                pinned.get(name, "").splitlines(keepends=True),
                current.get(name, "").splitlines(keepends=True),
                f"tests/snapshots/{name}.txt (reviewed)",
                "current output",
            )
        )
    assert not diffs, "findings changed; review, then run with --update-snapshots:\n" + "".join(
        diffs
    )


def test_every_rule_with_examples_has_a_snapshot() -> None:
    names = {path.stem for path in SNAPSHOTS.glob("*.txt")}
    codes = {_snapshot_of(path) for path in EXAMPLES if path.name == "bad.py"}
    assert codes <= names
    assert {"projects", "notebooks"} <= names
