"""Output for people: ruff-style lines, source excerpts, colour on terminals only, summary, docs."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from snippets import MIXED

from devlint.diagnostic import Diagnostic, Severity, SourceEdit, SuggestedFix
from devlint.frontends.text_output import Painter, source_excerpt, summary
from devlint.rules import all_rules

ROOT = Path(__file__).resolve().parents[1]
ANSI = "\x1b["


def devlint(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "devlint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def on_terminal(*args: str, cwd: Path, env: dict[str, str]) -> str:
    """What devlint writes to a pseudo-terminal (stdout and stderr both)."""
    controller, terminal = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    process = subprocess.Popen(
        [sys.executable, "-m", "devlint", *args],
        cwd=cwd,
        stdout=terminal,
        stderr=terminal,
        env={**environment, "TERM": "xterm", **env},
    )
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=120)
    os.close(controller)
    return b"".join(chunks).decode()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(MIXED)
    return tmp_path


def test_show_source_underlines_the_span(project: Path) -> None:
    result = devlint("check", "--show-source", "train.py", cwd=project)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("train.py:7:12: DVL101 ")
    assert lines[1:4] == [
        "  |",
        "7 |     return a + b",
        "  |            ^^^^^",
    ]
    assert ANSI not in result.stdout + result.stderr  # piped: no colour


def test_excerpt_aligns_carets_after_tabs_and_wide_characters() -> None:
    line = '\tlabel = "日本😀"; c = a + b'
    start = line.index("a + b")
    d = Diagnostic("t.py", 1, start, 1, start + 5, "DVL101", "m")
    _, shown, carets = source_excerpt(d, [line], Painter(False))
    assert shown == '1 |     label = "日本😀"; c = a + b'
    # The tab is 4 columns, 日本😀 six: the carets sit under `a + b` on a terminal.
    assert carets == "  |" + " " * (1 + 4 + len('label = "') + 6 + len('"; c = ')) + "^^^^^"


def test_long_spans_show_their_ends() -> None:
    lines = [f"x{index}" for index in range(10)]
    d = Diagnostic("t.py", 1, 0, 10, 2, "DVL101", "m")
    excerpt = source_excerpt(d, lines, Painter(False))
    assert "..." in excerpt
    assert excerpt[1] == " 1 | x0"
    assert excerpt[-2] == "10 | x9"


def test_colour_only_on_a_terminal_and_never_with_no_color(project: Path) -> None:
    coloured = on_terminal("check", "train.py", cwd=project, env={})
    assert f"{ANSI}1;31mDVL101" in coloured
    assert "Found 1 problem in 1 file (DVL101: 1)." in coloured
    plain = on_terminal("check", "train.py", cwd=project, env={"NO_COLOR": "1"})
    assert ANSI not in plain
    assert "train.py:7:12: DVL101" in plain
    forced = devlint("check", "train.py", cwd=project, env={"FORCE_COLOR": "1"})
    assert ANSI in forced.stdout
    assert ANSI in devlint("check", "--color", "always", "train.py", cwd=project).stdout
    never = on_terminal("check", "--color", "never", "train.py", cwd=project, env={})
    assert ANSI not in never


def test_summary_counts_codes_and_fixes() -> None:
    def finding(code: str, safe: bool | None) -> Diagnostic:
        fix = None
        if safe is not None:
            fix = SuggestedFix("fix it", safe, (SourceEdit(1, 0, 1, 1, "y"),))
        return Diagnostic("t.py", 1, 0, 1, 1, code, "m", Severity.WARNING, fix)

    assert summary([], 3) == "No problems found in 3 files."
    assert summary([finding("DVL101", None)], 1) == "Found 1 problem in 1 file (DVL101: 1)."
    found = [finding("DVL201", True), finding("DVL201", True), finding("DVL101", None)]
    assert summary(found, 2) == (
        "Found 3 problems in 2 files (DVL101: 1, DVL201: 2); 2 fixable with --fix."
    )
    found.append(finding("DVL103", False))
    assert summary(found, 2).endswith("; 2 fixable with --fix, 1 more with --unsafe-fixes.")
    assert summary([finding("DVL103", False)], 1).endswith("; 1 with --unsafe-fixes.")


def test_rules_table_has_code_name_severity_and_fixable(tmp_path: Path) -> None:
    lines = devlint("rules", cwd=tmp_path).stdout.splitlines()
    assert lines[0].split() == ["CODE", "NAME", "SEVERITY", "FIX", "SUMMARY"]
    for line, rule in zip(lines[1:], all_rules(), strict=True):
        meta = rule.meta
        assert line.split()[:4] == [
            meta.code,
            meta.name,
            meta.severity.value,
            "yes" if meta.fixable else "-",
        ]


def test_rule_prints_its_documentation(tmp_path: Path) -> None:
    result = devlint("rule", "DVL101", cwd=tmp_path)
    assert result.returncode == 0
    page = (ROOT / "docs" / "rules" / "DVL101.md").read_text(encoding="utf-8")
    assert result.stdout == page.rstrip() + "\n"
    assert devlint("rule", "dvl201", cwd=tmp_path).stdout.startswith(
        "# DVL201 transfer-result-discarded"
    )
    assert "could not be parsed" in devlint("rule", "DVL001", cwd=tmp_path).stdout


def test_rule_page_falls_back_to_the_docstring(monkeypatch: pytest.MonkeyPatch) -> None:
    from devlint import rule_docs

    monkeypatch.setattr(rule_docs, "_DOCS_DIR", Path("/nonexistent"))
    page = rule_docs.rule_page("DVL201")
    assert page is not None
    assert page.startswith("# DVL201 transfer-result-discarded")
    assert "## What it does" in page
    assert page.rstrip().endswith("/docs/rules/DVL201.md")


def test_unknown_rule_is_a_usage_error(tmp_path: Path) -> None:
    result = devlint("rule", "DVL999", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == "devlint: error: no rule 'DVL999'; `devlint rules` lists them"
