"""The flake8 plugin through a real ``flake8`` process: columns, noqa, selection, jobs, stdin."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest
from snippets import DISCARDED

from devlint.frontends.flake8_plugin import Plugin
from devlint.rules import all_rules

MIXED = """\
import torch


def run():
    a = torch.zeros(3, device="cuda")
    b = torch.ones(3)
    return a + b{comment}
"""


def flake8(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def mixed(comment: str = "") -> str:
    return MIXED.format(comment=comment)


def reports(result: subprocess.CompletedProcess[str]) -> list[tuple[str, int, int, str]]:
    """(path, line, column, code) of each flake8 output line."""
    assert "Traceback" not in result.stderr, result.stderr
    found = []
    for line in result.stdout.splitlines():
        path, row, column, rest = line.split(":", 3)
        found.append((path, int(row), int(column), rest.split()[0]))
    return found


def test_flake8_reports_one_based_column(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(mixed())
    result = flake8("--select", "DVL", "m.py", cwd=tmp_path)
    assert reports(result) == [("m.py", 7, 12, "DVL101")]
    assert result.returncode == 1


def test_run_yields_zero_based_column() -> None:
    lines = mixed().splitlines(keepends=True)
    plugin = Plugin(None, lines, "m.py")
    found = [(row, column, text.split()[0]) for row, column, text, _ in plugin.run()]
    assert found == [(7, 11, "DVL101")]


def test_messages_carry_no_control_characters() -> None:
    source = (
        "import torch\n\n\ndef run():\n    a = torch.zeros(3)\n"
        '    return a + torch.ones(3).to("cuda").view("\x1b[2J")\n'
    )
    found = [text for *_, text, _ in Plugin(None, source.splitlines(keepends=True), "m.py").run()]
    (text,) = [text for text in found if text.startswith("DVL101 ")]
    assert '.view("\\x1b[2J")' in text
    assert "\x1b" not in text


def test_plugin_reads_lines_not_the_file() -> None:
    lines = DISCARDED.splitlines(keepends=True)
    assert [text.split()[0] for *_, text, _ in Plugin(None, lines, "no/such/file.py").run()] == [
        "DVL201"
    ]


def test_plugin_is_a_tree_plugin() -> None:
    assert "tree" in inspect.signature(Plugin).parameters
    assert Plugin.name == "devlint"


def test_plugin_is_registered(tmp_path: Path) -> None:
    assert "devlint" in flake8("--version", cwd=tmp_path).stdout


def test_codes_are_on_by_default(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(mixed())
    assert ("m.py", 7, 12, "DVL101") in reports(flake8("m.py", cwd=tmp_path))


@pytest.mark.parametrize("comment", ["  # noqa", "  # noqa: DVL101", "  # noqa:DVL"])
def test_noqa_suppresses(tmp_path: Path, comment: str) -> None:
    (tmp_path / "m.py").write_text(mixed(comment))
    assert reports(flake8("--select", "DVL", "m.py", cwd=tmp_path)) == []


def test_noqa_for_another_code_does_not_suppress(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(mixed("  # noqa: E501"))
    assert reports(flake8("--select", "DVL", "m.py", cwd=tmp_path)) == [("m.py", 7, 12, "DVL101")]


@pytest.mark.parametrize(
    ("options", "codes"),
    [
        (["--select", "DVL101"], {"DVL101"}),
        (["--select", "E"], set()),
        (["--select", "E", "--extend-select", "DVL"], {"DVL101", "DVL201"}),
        (["--select", "DVL", "--extend-ignore", "DVL2"], {"DVL101"}),
    ],
)
def test_flake8_selection(tmp_path: Path, options: list[str], codes: set[str]) -> None:
    (tmp_path / "m.py").write_text(mixed())
    (tmp_path / "d.py").write_text(DISCARDED)
    found = reports(flake8(*options, "m.py", "d.py", cwd=tmp_path))
    assert {code for *_, code in found if code.startswith("DVL")} == codes


def test_parallel_jobs(tmp_path: Path) -> None:
    names = [f"m{index}.py" for index in range(6)]
    for name in names:
        (tmp_path / name).write_text(mixed())
    result = flake8("-j", "2", "--select", "DVL", *names, cwd=tmp_path)
    assert sorted(reports(result)) == [(name, 7, 12, "DVL101") for name in names]


def test_stdin(tmp_path: Path) -> None:
    result = flake8("--select", "DVL", "-", cwd=tmp_path, stdin=mixed())
    assert reports(result) == [("stdin", 7, 12, "DVL101")]


def test_device_names_option_is_accepted_from_command_line_and_config(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(mixed())
    cli = flake8("--select", "DVL", "--devlint-device-names", "dev,gpu", "m.py", cwd=tmp_path)
    assert reports(cli) == [("m.py", 7, 12, "DVL101")]
    (tmp_path / "setup.cfg").write_text("[flake8]\nselect = DVL\ndevlint-device-names = dev\n")
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "m.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert reports(result) == [("m.py", 7, 12, "DVL101")]


def flake8_options(monkeypatch: pytest.MonkeyPatch, *argv: str) -> Namespace:
    """flake8's own option parsing, which calls ``Plugin.parse_options`` (undone after the test)."""
    from flake8.options.parse_args import parse_args

    monkeypatch.setattr(Plugin, "device_names", ())
    monkeypatch.setattr(Plugin, "selected", True)
    return parse_args(["--isolated", *argv])[1]


def test_parse_options_sets_device_names(monkeypatch: pytest.MonkeyPatch) -> None:
    flake8_options(monkeypatch, "--devlint-device-names", "dev,gpu")
    assert Plugin.device_names == ("dev", "gpu")


@pytest.mark.parametrize(
    ("argv", "selected"),
    [
        ([], True),
        (["--select", "F"], False),
        (["--select", "E,W,C90"], False),
        (["--select", "D"], True),  # a prefix of every DVL code
        (["--select", "DVL204"], True),  # off by default, selected by name
        (["--select", "F", "--extend-select", "DVL1"], True),
        (["--extend-select", "DVL407"], True),
        (["--extend-ignore", "DVL"], False),
        (["--select", "DVL", "--ignore", "DVL"], False),
        (["--extend-ignore", "DVL0,DVL1,DVL2,DVL3,DVL4"], False),
        (["--extend-ignore", "DVL0,DVL1,DVL2,DVL3"], True),  # DVL4xx rules are on
        (["--extend-ignore", "DVL0,DVL1,DVL3,DVL4,DVL201,DVL202,DVL203"], False),  # DVL204 is off
    ],
)
def test_parse_options_decides_whether_any_code_is_selected(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], selected: bool
) -> None:
    flake8_options(monkeypatch, *argv)
    assert Plugin.selected is selected


def test_plugin_reports_nothing_when_no_code_is_selected(monkeypatch: pytest.MonkeyPatch) -> None:
    flake8_options(monkeypatch, "--select", "F")
    assert list(Plugin(None, mixed().splitlines(keepends=True), "m.py").run()) == []


@pytest.mark.parametrize(
    ("options", "codes"),
    [
        (["--select", "F"], {"F401"}),
        (["--select", "DVL"], {"DVL101"}),
        (["--extend-select", "DVL"], {"DVL101", "F401"}),
        ([], {"DVL101", "F401"}),
    ],
)
def test_libcst_is_imported_only_when_a_dvl_code_is_selected(
    tmp_path: Path, options: list[str], codes: set[str]
) -> None:
    """``-X importtime`` lists every module the flake8 process imports, on stderr."""
    (tmp_path / "m.py").write_text("import os\n" + mixed())
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "flake8", "--isolated", *options, "m.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert {code for *_, code in reports(result)} >= codes
    assert {code for *_, code in reports(result) if code.startswith("DVL")} == {
        code for code in codes if code.startswith("DVL")
    }
    imported_libcst = re.search(r"^import time: .*\| +libcst\b", result.stderr, re.MULTILINE)
    assert (imported_libcst is not None) is ("DVL101" in codes)


def test_rules_off_by_default_are_in_flake8_default_ignore() -> None:
    class OptionManager:
        def __init__(self) -> None:
            self.options: list[str] = []
            self.default_ignore: list[str] = []

        def add_option(self, name: str, **_kwargs: object) -> None:
            self.options.append(name)

        def extend_default_ignore(self, codes: list[str]) -> None:
            self.default_ignore.extend(codes)

    manager = OptionManager()
    Plugin.add_options(manager)
    assert manager.options == ["--devlint-device-names"]
    assert manager.default_ignore == [
        rule.meta.code for rule in all_rules() if not rule.meta.default_enabled
    ]


def test_a_file_is_linted_with_the_project_modules_it_imports(tmp_path: Path) -> None:
    """flake8 hands over one file; its helper in utils.py is read through the project."""
    project = Path(__file__).resolve().parent.parent / "fixtures" / "projects"
    for name in ("train.py", "utils.py"):
        (tmp_path / name).write_text((project / "helper_forgets_labels" / name).read_text())
    result = flake8("--select", "DVL", "-j", "2", ".", cwd=tmp_path)
    assert reports(result) == [("./train.py", 17, 37, "DVL301")]
