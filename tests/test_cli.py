"""The ``devlint`` command end to end: output formats, exit codes, selection, files, jobs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from devlint.frontends import cli
from devlint.project.files import iter_source_files

MIXED = """\
import torch


def run():
    a = torch.zeros(3, device="cuda")
    b = torch.ones(3)
    return a + b{comment}
"""
MIXED_AT = (7, 12)  # `a + b`, 1-based column
DISCARDED = """\
import torch

x = torch.ones(3)
x.to("cuda")
"""
DISCARDED_AT = (4, 1)
CLEAN = """\
import torch

x = torch.ones(3, device="cuda")
y = x + 1
"""


def devlint(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "devlint", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def mixed(comment: str = "") -> str:
    return MIXED.format(comment=comment)


def reports(result: subprocess.CompletedProcess[str]) -> list[tuple[str, int, int, str]]:
    """(path, line, column, code) of each text-format line."""
    found = []
    for line in result.stdout.splitlines():
        path, row, column, rest = line.split(":", 3)
        found.append((path, int(row), int(column), rest.split()[0]))
    return found


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "mixed.py").write_text(mixed())
    (tmp_path / "discarded.py").write_text(DISCARDED)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def test_text_output_has_one_based_columns_and_exit_1(project: Path) -> None:
    result = devlint("check", ".", cwd=project)
    assert reports(result) == [
        ("discarded.py", *DISCARDED_AT, "DVL201"),
        ("mixed.py", *MIXED_AT, "DVL101"),
    ]
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "Found 2 problems in 2 of 3 files (DVL101: 1, DVL201: 1); 1 fixable with --fix."
    )


def test_clean_file_exits_0(project: Path) -> None:
    result = devlint("check", "clean.py", cwd=project)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr.strip() == "No problems found in 1 file."


def test_json_output_schema(project: Path) -> None:
    result = devlint("check", "--format", "json", "mixed.py", cwd=project)
    assert result.returncode == 1
    [entry] = json.loads(result.stdout)
    assert set(entry) == {
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "code",
        "message",
        "severity",
    }
    assert (entry["path"], entry["line"], entry["column"], entry["code"]) == (
        "mixed.py",
        *MIXED_AT,
        "DVL101",
    )
    assert (entry["end_line"], entry["end_column"]) == (7, 17)  # end of `a + b`, exclusive
    assert entry["severity"] in {"error", "warning", "info"}
    assert entry["message"]


def test_json_output_of_clean_file_is_empty_list(project: Path) -> None:
    result = devlint("check", "--format", "json", "clean.py", cwd=project)
    assert (result.returncode, json.loads(result.stdout), result.stderr) == (0, [], "")


@pytest.mark.parametrize(
    "comment", ["  # noqa", "  # noqa: DVL101", "  # noqa:DVL1", "  # NOQA: DVL"]
)
def test_noqa_suppresses(tmp_path: Path, comment: str) -> None:
    (tmp_path / "m.py").write_text(mixed(comment))
    assert devlint("check", "m.py", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("comment", ["  # noqa: E501", "  # noqa: DVL201", "  # no qa"])
def test_noqa_for_other_codes_does_not_suppress(tmp_path: Path, comment: str) -> None:
    (tmp_path / "m.py").write_text(mixed(comment))
    result = devlint("check", "m.py", cwd=tmp_path)
    assert reports(result) == [("m.py", *MIXED_AT, "DVL101")]


@pytest.mark.parametrize(
    ("options", "codes"),
    [
        (["--select", "DVL2"], ["DVL201"]),
        (["--select", "DVL101,DVL201"], ["DVL201", "DVL101"]),
        (["--ignore", "DVL101"], ["DVL201"]),
        (["--select", "DVL2", "--extend-select", "DVL101"], ["DVL201", "DVL101"]),
        (["--select", "DVL", "--ignore", "DVL2"], ["DVL101"]),
        (["--select", "DVL001"], []),
    ],
)
def test_select_and_ignore(project: Path, options: list[str], codes: list[str]) -> None:
    result = devlint("check", *options, "discarded.py", "mixed.py", cwd=project)
    assert [code for *_, code in reports(result)] == codes
    assert result.returncode == (1 if codes else 0)


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (["--select", "XYZ123"], "unknown rule code 'XYZ123' in --select (codes look like DVL101"),
        (["--select", "DVL1O1"], "unknown rule code 'DVL1O1' in --select (did you mean DVL101?)"),
        (["--select", "DVL,E"], "unknown rule code 'E' in --select"),
        (
            ["--ignore", "DVL2,DVL2O1"],
            "unknown rule code 'DVL2O1' in --ignore (did you mean DVL201?)",
        ),
        (
            ["--extend-select", "dvl407"],
            "unknown rule code 'dvl407' in --extend-select (did you mean DVL407?)",
        ),
        (  # no real code is near: none is suggested (once "did you mean DVL?")
            ["--ignore", "DVL999"],
            "unknown rule code 'DVL999' in --ignore (codes look like DVL101, prefixes like DVL1;",
        ),
        (["--ignore", "DVL1011"], "unknown rule code 'DVL1011' in --ignore (did you mean DVL101?)"),
    ],
)
def test_unknown_code_is_a_usage_error_naming_the_nearest(
    project: Path, options: list[str], error: str
) -> None:
    result = devlint("check", *options, "mixed.py", cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"devlint: error: {error}")


def test_stdin(project: Path) -> None:
    result = devlint("check", "-", cwd=project, stdin=mixed())
    assert reports(result) == [("<stdin>", *MIXED_AT, "DVL101")]
    named = devlint("check", "--stdin-filename", "pkg/m.py", "-", cwd=project, stdin=mixed())
    assert reports(named) == [("pkg/m.py", *MIXED_AT, "DVL101")]


def test_explicit_file_is_linted_whatever_its_suffix(tmp_path: Path) -> None:
    (tmp_path / "train").write_text(mixed())
    (tmp_path / "notes.txt").write_text(mixed())
    assert reports(devlint("check", "train", cwd=tmp_path)) == [("train", *MIXED_AT, "DVL101")]
    assert devlint("check", ".", cwd=tmp_path).stderr.strip() == "No problems found in 0 files."


def test_parallel_jobs_report_every_file_in_order(tmp_path: Path) -> None:
    for index in range(40):
        (tmp_path / f"m{index:02}.py").write_text(mixed())
    parallel = devlint("check", "--jobs", "2", ".", cwd=tmp_path)
    assert reports(parallel) == [(f"m{index:02}.py", *MIXED_AT, "DVL101") for index in range(40)]
    assert parallel.stdout == devlint("check", "-j", "1", ".", cwd=tmp_path).stdout


@pytest.mark.parametrize(
    "args",
    [
        ["check", "missing.py"],
        ["check", "--select", "dvl-1", "."],
        ["check", "--jobs", "0", "."],
        ["confirm", "--jobs", "0", "DVL101"],
        ["confirm", "-j", "two", "DVL101"],
        ["check", "--format", "xml", "."],
        ["check", "--no-such-option", "."],
        ["check", "--config", "missing.toml", "."],
        ["no-such-command"],
        [],
    ],
)
def test_usage_errors_exit_2_without_traceback(tmp_path: Path, args: list[str]) -> None:
    result = devlint(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert "error" in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_path_is_named(tmp_path: Path) -> None:
    result = devlint("check", "missing.py", cwd=tmp_path)
    assert result.stderr.strip() == "devlint: error: missing.py: no such file or directory"


def test_rules_lists_every_rule(tmp_path: Path) -> None:
    from devlint.rules import all_rules

    text = devlint("rules", cwd=tmp_path)
    assert text.returncode == 0
    assert text.stdout.split()[:5] == ["CODE", "NAME", "SEVERITY", "FIX", "SUMMARY"]
    listed = json.loads(devlint("rules", "--format", "json", cwd=tmp_path).stdout)
    assert [row["code"] for row in listed] == [rule.meta.code for rule in all_rules()]
    for row, rule in zip(listed, all_rules(), strict=True):
        assert row["name"] == rule.meta.name
        assert row["severity"] == rule.meta.severity.value
        assert f"{rule.meta.code}  " in text.stdout


def test_closed_stdout_is_not_a_traceback(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "devlint", "rules"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.close()
    _, stderr = process.communicate(timeout=60)
    assert b"Traceback" not in stderr
    assert b"Exception ignored" not in stderr


def test_ctrl_c_exits_130_quietly(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*_args: object, **_options: object) -> list[object]:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "lint_file", interrupted)
    assert cli.main(["check", str(project)]) == 130
    assert capsys.readouterr() == ("", "")


def test_walk_skips_vcs_cache_and_virtualenv_directories(tmp_path: Path) -> None:
    for directory in [".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", "env", "pkg"]:
        (tmp_path / directory).mkdir()
        (tmp_path / directory / "m.py").write_text("")
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "pkg" / "stub.pyi").write_text("")
    (tmp_path / "pkg" / "data.json").write_text("")
    (tmp_path / "top.py").write_text("")
    found = [entry.path.relative_to(tmp_path).as_posix() for entry in iter_source_files([tmp_path])]
    assert found == ["top.py", "pkg/m.py", "pkg/stub.pyi"]


def test_skipped_directory_given_explicitly_is_walked(tmp_path: Path) -> None:
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "m.py").write_text("")
    assert [entry.path for entry in iter_source_files([tmp_path / ".venv"])] == [
        tmp_path / ".venv" / "m.py"
    ]


def test_same_file_is_linted_once(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("")
    (tmp_path / "alias.py").symlink_to("m.py")
    paths = [tmp_path, tmp_path / "m.py", tmp_path / "m.py"]
    assert [entry.path.name for entry in iter_source_files(paths)] == ["alias.py"]
