"""Output for people: ruff-style lines, source excerpts, colour on terminals only, summary, docs."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from snippets import DISCARDED, MIXED

from devlint.diagnostic import Diagnostic, Severity
from devlint.frontends import cli
from devlint.frontends.github_output import annotation
from devlint.frontends.text_output import Painter, format_diagnostic, source_excerpt, summary
from devlint.notices import UNREADABLE, notice
from devlint.project.files import Entry
from devlint.rules import all_rules
from devlint.running.fix_count import FixCount

ROOT = Path(__file__).resolve().parents[1]
ANSI = "\x1b["
COLOUR = re.compile(r"\x1b\[[0-9;]*m")
"""The only escape sequences devlint itself prints: SGR colours."""


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
    assert lines[0].startswith("train.py:7:12: DVL101 [error] `b` is on cpu")
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


def test_summary_counts_codes_and_the_fixes_fix_would_apply() -> None:
    def finding(code: str, path: str = "t.py") -> Diagnostic:
        return Diagnostic(path, 1, 0, 1, 1, code, "m", Severity.WARNING)

    assert summary([], 3) == "No problems found in 3 files."
    assert summary([], 1) == "No problems found in 1 file."
    assert summary([finding("DVL101")], 1) == "Found 1 problem in 1 file (DVL101: 1)."
    found = [finding("DVL201"), finding("DVL201"), finding("DVL101", "u.py")]
    two = FixCount(("DVL201", "DVL201"))
    assert summary(found, 2, two) == (
        "Found 3 problems in 2 files (DVL101: 1, DVL201: 2); 2 fixable with --fix."
    )
    assert summary(found, 12).startswith("Found 3 problems in 2 of 12 files (DVL101: 1, ")
    assert summary(found[:1], 3).startswith("Found 1 problem in 1 of 3 files (DVL201: 1)")
    assert summary(found, 2, FixCount(two.codes, 1)).endswith(
        "; 2 fixable with --fix, 1 more with --unsafe-fixes."
    )
    assert summary(found, 2, FixCount(unsafe_left=1)).endswith("; 1 with --unsafe-fixes.")


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


def test_rule_page_without_the_generated_docs_is_built_with_the_examples(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As in an installed package (tests/test_fresh_clone.py runs a real wheel)."""
    from devlint import rule_docs

    monkeypatch.setattr(rule_docs, "_DOCS_DIR", Path("/nonexistent"))
    page = rule_docs.rule_page("DVL201")
    assert page is not None
    generated = (ROOT / "docs" / "rules" / "DVL201.md").read_text(encoding="utf-8")
    assert page.startswith(generated[: generated.index("## Evidence")])  # the examples too
    assert page.rstrip().endswith("/docs/rules/DVL201.md")


def test_unknown_rule_is_a_usage_error(tmp_path: Path) -> None:
    result = devlint("rule", "DVL999", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == "devlint: error: no rule 'DVL999'; `devlint rules` lists them"


def test_summary_never_finds_problems_in_fewer_files_than_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A folder that cannot be read is the only thing given: one notice, no file linted.
    assert summary([notice("data", UNREADABLE, "cannot read directory")], 0) == (
        "Found 1 problem in 1 file (DVL002: 1)."
    )
    unreadable = Entry(tmp_path / "data", "cannot read directory: Permission denied")
    monkeypatch.setattr(cli, "iter_source_files", lambda *_: iter([unreadable]))
    assert cli.main(["check", "--no-cache", str(tmp_path / "data")]) == 1
    assert capsys.readouterr().err == "Found 1 problem in 1 file (DVL002: 1).\n"


def test_each_finding_shows_its_severity() -> None:
    shown = [
        format_diagnostic(Diagnostic("t.py", 3, 4, 3, 9, "DVL201", "m", severity), Painter(False))
        for severity in Severity
    ]
    assert shown == [
        "t.py:3:5: DVL201 [error] m",
        "t.py:3:5: DVL201 [warning] m",
        "t.py:3:5: DVL201 [info] m",
    ]


HOSTILE = (
    "import torch\n\n\ndef run():\n    a = torch.zeros(3)\n"
    '    return a + torch.ones(3).to("cuda").view("\x1b[2J\x1b]8;;http://x\x07\x08\x9b\u202e")\n'
)
"""A finding whose message and source line carry a clear-screen, a hyperlink, a bell, a
backspace, a C1 CSI and a bidi override (in a string literal, so the file parses)."""


@pytest.mark.parametrize("color", ["never", "always"])
def test_control_characters_never_reach_the_terminal(tmp_path: Path, color: str) -> None:
    name = "evil\x1b[2J\r\u202e.py"
    (tmp_path / name).write_text(HOSTILE)
    result = devlint("check", "--no-cache", "--show-source", "--color", color, ".", cwd=tmp_path)
    assert result.returncode == 1
    output = COLOUR.sub("", result.stdout + result.stderr)
    assert [char for char in output if ord(char) < 32 and char not in "\n\t"] == []
    assert not {"\x7f", "\x9b", "\u202e"} & set(output)
    finding, _, shown, *_ = output.splitlines()
    assert finding.startswith("evil\\x1b[2J\\r\\u202e.py:6:12: DVL101 [error] ")
    assert '.view("\\x1b[2J' in finding  # the message quotes the code
    assert shown.endswith('.view("\\x1b[2J\\x1b]8;;http://x\\x07\\x08\\x9b\\u202e")')
    assert "Found 1 problem in 1 file" in output
    missing = devlint("check", "--no-cache", "gone\x1b[2J.py", cwd=tmp_path)
    assert missing.stderr == "devlint: error: gone\\x1b[2J.py: no such file or directory\n"
    assert devlint("rule", "\x1b[2J", cwd=tmp_path).stderr == (
        "devlint: error: no rule '\\x1b[2J'; `devlint rules` lists them\n"
    )
    unknown = devlint("check", "--\x1b[2J", cwd=tmp_path).stderr
    assert unknown.endswith("devlint: error: unrecognized arguments: --\\x1b[2J\n")


def test_a_diff_is_escaped_on_a_terminal_and_raw_for_patch(tmp_path: Path) -> None:
    (tmp_path / "d.py").write_text('import torch\n\nx = torch.ones(3)\nx.to("cuda")  # \x1b[2J\n')
    shown = on_terminal("check", "--diff", "d.py", cwd=tmp_path, env={"NO_COLOR": "1"})
    assert "\x1b" not in shown
    assert '+x = x.to("cuda")  # \\x1b[2J\r\n' in shown  # the terminal writes CR LF
    piped = devlint("check", "--diff", "d.py", cwd=tmp_path)
    assert '+x = x.to("cuda")  # \x1b[2J\n' in piped.stdout


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[31mred", "\\x1b[31mred"),
        ("over\rwrite\x08\x07", "over\\rwrite\\x08\\x07"),
        ("\x7f\x9b\x85", "\\x7f\\x9b\\x85"),
        ("abc\u202edef\u2066\u2069", "abc\\u202edef\\u2066\\u2069"),
        ("tab\tand\nline, 日本😀 é", "tab\tand\nline, 日本😀 é"),
    ],
)
def test_printable_escapes_control_characters_only(text: str, shown: str) -> None:
    from devlint.frontends.terminal import printable

    assert printable(text) == shown
    assert printable("a\nb\tc", one_line=True) == "a\\nb\\tc"


def test_github_format_annotates_each_finding(project: Path) -> None:
    (project / "discarded.py").write_text(DISCARDED)
    result = devlint("check", "--format", "github", ".", cwd=project)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "::warning file=discarded.py,line=4,col=1,endLine=4,endColumn=13,title=DVL201::"
        "`.to()` returns a new tensor and leaves `x` as it was; assign the result "
        "(`x = x.to(...)`)",
        "::error file=train.py,line=7,col=12,endLine=7,endColumn=17,title=DVL101::"
        "`b` is on cpu (created without `device=` at line 6) but `a` is on cuda "
        "(created at line 5)",
    ]
    assert result.stderr == ""


def test_github_annotations_cannot_be_ended_early_or_forged() -> None:
    d = Diagnostic(
        "a,b:c%.py", 2, 0, 3, 4, "DVL204", "100%\n::error::forged\r\x1b[2J", Severity.INFO
    )
    assert annotation(d) == (
        "::notice file=a%2Cb%3Ac%25.py,line=2,col=1,endLine=3,endColumn=5,title=DVL204::"
        "100%25%0A::error::forged\\r\\x1b[2J"
    )


def test_statistics_count_findings_per_code_instead_of_listing_them(project: Path) -> None:
    (project / "other.py").write_text(MIXED)
    (project / "discarded.py").write_text(DISCARDED)
    result = devlint("check", "--statistics", ".", cwd=project)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "2  DVL101      mixed-device-operands",
        "1  DVL201  [*] transfer-result-discarded",
    ]
    assert result.stderr.startswith("Found 3 problems in 3 files (DVL101: 2, DVL201: 1)")
    wrong = devlint("check", "--statistics", "--format", "json", ".", cwd=project)
    assert (wrong.returncode, wrong.stdout) == (2, "")
    assert "--statistics works with --format text only" in wrong.stderr


def test_quiet_prints_the_findings_only(project: Path) -> None:
    loud = devlint("check", ".", cwd=project)
    quiet = devlint("check", "--quiet", ".", cwd=project)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (1, loud.stdout, "")
    assert loud.stderr.startswith("Found 1 problem")
    assert devlint("check", "-q", "--statistics", ".", cwd=project).stderr == ""
    (project / "discarded.py").write_text(DISCARDED)
    fixed = devlint("check", "-q", "--fix", "discarded.py", cwd=project)
    assert (fixed.returncode, fixed.stdout, fixed.stderr) == (0, "", "")
    assert "x = x.to(" in (project / "discarded.py").read_text()
