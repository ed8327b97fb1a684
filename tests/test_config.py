"""``[tool.devlint]`` in pyproject.toml: discovery, validation, and its effect on the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from snippets import DISCARDED, MIXED

from devlint.config import (
    DEFAULT_SETTINGS,
    ConfigError,
    Settings,
    load_settings,
    load_settings_file,
)


def devlint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "devlint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def codes(result: subprocess.CompletedProcess[str]) -> list[tuple[str, str]]:
    """(path, code) of each text-format line."""
    return [
        (line.split(":")[0], line.split(": ", 1)[1].split()[0])
        for line in result.stdout.splitlines()
    ]


def write_pyproject(directory: Path, body: str) -> Path:
    pyproject = directory / "pyproject.toml"
    pyproject.write_text(f"[project]\nname = 'demo'\n\n[tool.devlint]\n{body}")
    return pyproject


def test_reads_every_key(tmp_path: Path) -> None:
    write_pyproject(
        tmp_path,
        'select = ["DVL1"]\nextend-select = ["DVL407"]\nignore = ["DVL102"]\n'
        'extend-ignore = ["DVL103"]\ndevice-names = ["dev", "args.device"]\n'
        '[tool.devlint.per-file-ignores]\n"tests/*" = ["DVL101", "DVL2"]\n',
    )
    assert load_settings(tmp_path) == Settings(
        select=("DVL1",),
        extend_select=("DVL407",),
        ignore=("DVL102",),
        extend_ignore=("DVL103",),
        per_file_ignores=(("tests/*", ("DVL101", "DVL2")),),
        device_names=("dev", "args.device"),
    )
    assert load_settings(tmp_path).root == str(tmp_path.resolve())


def test_nearest_pyproject_with_a_devlint_table_wins(tmp_path: Path) -> None:
    write_pyproject(tmp_path, 'ignore = ["DVL1"]\n')
    inner = tmp_path / "pkg" / "sub"
    inner.mkdir(parents=True)
    (tmp_path / "pkg" / "pyproject.toml").write_text("[project]\nname = 'no-devlint-here'\n")
    (inner / "m.py").write_text("")
    assert load_settings(inner / "m.py").ignore == ("DVL1",)
    assert load_settings(inner).root == str(tmp_path.resolve())
    write_pyproject(inner, 'ignore = ["DVL2"]\n')
    assert load_settings(inner / "m.py").ignore == ("DVL2",)


def test_no_pyproject_means_defaults(tmp_path: Path) -> None:
    assert load_settings(tmp_path) == DEFAULT_SETTINGS


def test_explicit_config_file_without_table_means_defaults(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[project]\nname = 'demo'\n")
    assert load_settings_file(pyproject) == DEFAULT_SETTINGS


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ('selct = ["DVL1"]\n', "selct"),
        ('select = "DVL1"\n', "select"),
        ('ignore = ["dvl 1"]\n', "ignore"),
        ("extend-select = [1]\n", "extend-select"),
        ('per-file-ignores = ["tests/*"]\n', "per-file-ignores"),
        ('[tool.devlint.per-file-ignores]\n"tests/*" = "DVL1"\n', "per-file-ignores.'tests/*'"),
        ('device-names = ["not a name"]\n', "device-names"),
        ('ignore = ["DVL2O1"]\n', "ignore"),
        ('extend-ignore = ["DVL2O1"]\n', "extend-ignore"),
        ("extend-ignore = [201]\n", "extend-ignore"),
    ],
)
def test_invalid_config_names_file_and_key(tmp_path: Path, body: str, key: str) -> None:
    pyproject = write_pyproject(tmp_path, body)
    with pytest.raises(ConfigError) as error:
        load_settings(tmp_path)
    assert str(error.value).startswith(f"{pyproject.resolve()}: [tool.devlint] {key}: ")


def test_invalid_toml_names_file(tmp_path: Path) -> None:
    pyproject = write_pyproject(tmp_path, "select = [\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_settings(tmp_path)
    result = devlint("check", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert str(pyproject) in result.stderr
    assert "Traceback" not in result.stderr


DEEP = "[" * 100_000 + "]" * 100_000


def test_a_deeply_nested_value_is_a_config_error_naming_file_and_key(tmp_path: Path) -> None:
    pyproject = write_pyproject(tmp_path, f"ignore = []\n[tool.other]\nhostile = {DEEP}\n")
    message = f"{pyproject}: [tool.other] hostile: value nested too deeply to read"
    with pytest.raises(ConfigError) as error:
        load_settings(tmp_path)
    assert str(error.value) == message
    result = devlint("check", ".", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (2, f"devlint: error: {message}\n")


@pytest.mark.parametrize(
    ("body", "key", "problem"),
    [
        (
            "[tool.devlint.per-file-ignores]\n"
            + "".join(f'"gen/m{n}.py" = ["DVL1"]\n' for n in range(20_000)),
            "per-file-ignores",
            "20,000 patterns, over the limit of 1,000",
        ),
        (
            f'[tool.devlint.per-file-ignores]\n"{"*a" * 600}" = ["DVL1"]\n',
            "per-file-ignores",
            "pattern '*a*a*a",
        ),
        (f"exclude = {[f'gen{n}' for n in range(1001)]}\n", "exclude", "1,001 patterns"),
        (f"extend-exclude = ['{'x' * 1001}']\n", "extend-exclude", "pattern 'xxx"),
    ],
)
def test_too_many_or_too_long_patterns_are_a_config_error(
    tmp_path: Path, body: str, key: str, problem: str
) -> None:
    pyproject = write_pyproject(tmp_path, body)
    with pytest.raises(ConfigError) as error:
        load_settings(tmp_path)
    assert str(error.value).startswith(f"{pyproject.resolve()}: [tool.devlint] {key}: {problem}")


def test_cli_exits_2_on_bad_config(tmp_path: Path) -> None:
    write_pyproject(tmp_path, 'ignore = "DVL101"\n')
    result = devlint("check", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert "[tool.devlint] ignore: expected a list of codes" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("body", "key", "problem"),
    [
        ('select = ["DVL1O1"]\n', "select", "unknown rule code 'DVL1O1' (did you mean DVL101?)"),
        (
            'extend-select = ["DLV4"]\n',
            "extend-select",
            "unknown rule code 'DLV4' (did you mean DVL4?)",
        ),
        ('ignore = ["DVL", "E501"]\n', "ignore", "unknown rule code 'E501' (codes look like"),
        (
            '[tool.devlint.per-file-ignores]\n"tests/*" = ["DVL2", "DVL21"]\n',
            "per-file-ignores.'tests/*'",
            "unknown rule code 'DVL21' (did you mean DVL20?)",
        ),
    ],
)
def test_unknown_code_in_config_is_an_error_not_every_rule_off(
    tmp_path: Path, body: str, key: str, problem: str
) -> None:
    (tmp_path / "mixed.py").write_text(MIXED)
    pyproject = write_pyproject(tmp_path, body)
    result = devlint("check", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"devlint: error: {pyproject}: [tool.devlint] {key}: {problem}")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "tests").mkdir()
    for directory in ("src", "tests"):
        (tmp_path / directory / "mixed.py").write_text(MIXED)
        (tmp_path / directory / "discarded.py").write_text(DISCARDED)
    return tmp_path


def test_config_ignore_and_select(project: Path) -> None:
    write_pyproject(project, 'ignore = ["DVL101"]\n')
    assert {code for _, code in codes(devlint("check", ".", cwd=project))} == {"DVL201"}
    write_pyproject(project, 'select = ["DVL101"]\n')
    assert {code for _, code in codes(devlint("check", ".", cwd=project))} == {"DVL101"}


def test_command_line_codes_override_config(project: Path) -> None:
    write_pyproject(project, 'select = ["DVL101"]\nignore = ["DVL2"]\n')
    result = devlint("check", "--select", "DVL2", "--ignore", "DVL101", ".", cwd=project)
    assert {code for _, code in codes(result)} == {"DVL201"}


def test_per_file_ignores_are_relative_to_the_pyproject(project: Path) -> None:
    write_pyproject(project, '[tool.devlint.per-file-ignores]\n"tests/*" = ["DVL101"]\n')
    from_root = codes(devlint("check", ".", cwd=project))
    assert sorted(from_root) == [
        ("src/discarded.py", "DVL201"),
        ("src/mixed.py", "DVL101"),
        ("tests/discarded.py", "DVL201"),
    ]
    from_inside = codes(devlint("check", "mixed.py", cwd=project / "tests"))
    assert from_inside == []


def test_explicit_config_option(project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = write_pyproject(tmp_path_factory.mktemp("config"), 'ignore = ["DVL2"]\n')
    result = devlint("check", "--config", str(elsewhere), "src", cwd=project)
    assert codes(result) == [("src/mixed.py", "DVL101")]


EMPTY_SELECTION = (
    "no codes: that selects no rule, so nothing would be reported (leave it out for {}, or"
    " ignore DVL to turn every rule off)"
)


def test_an_empty_select_is_the_same_error_in_the_config_and_on_the_command_line(
    project: Path,
) -> None:
    """``select = []`` once turned every rule off without a word, while ``--select ""`` was
    refused with argparse's usage text."""
    pyproject = write_pyproject(project, "select = []\n")
    with pytest.raises(ConfigError) as error:
        load_settings(project)
    in_config = f"{pyproject}: [tool.devlint] select: " + EMPTY_SELECTION.format(
        "the default rules"
    )
    assert str(error.value) == in_config
    result = devlint("check", ".", cwd=project)
    assert (result.returncode, result.stdout, result.stderr) == (
        2,
        "",
        f"devlint: error: {in_config}\n",
    )
    pyproject.unlink()
    on_command_line = "--select: " + EMPTY_SELECTION.format("the configured rules")
    for empty in ("", " , "):
        result = devlint("check", "--select", empty, ".", cwd=project)
        assert (result.returncode, result.stdout, result.stderr) == (
            2,
            "",
            f"devlint: error: {on_command_line}\n",
        )


def test_an_empty_ignore_ignores_nothing_in_the_config_and_on_the_command_line(
    project: Path,
) -> None:
    """An empty ignore list reports more, never less: allowed in both places, and
    ``--ignore ""`` clears the configured ``ignore``."""
    write_pyproject(project, "ignore = []\n")
    assert {code for _, code in codes(devlint("check", "src", cwd=project))} == {
        "DVL101",
        "DVL201",
    }
    write_pyproject(project, 'ignore = ["DVL101"]\n')
    result = devlint("check", "--ignore", "", "src", cwd=project)
    assert {code for _, code in codes(result)} == {"DVL101", "DVL201"}


def test_extend_ignore_adds_to_ignore_in_the_config_and_on_the_command_line(
    project: Path,
) -> None:
    write_pyproject(project, 'ignore = ["DVL101"]\nextend-ignore = ["DVL201"]\n')
    assert codes(devlint("check", "src", cwd=project)) == []
    # --ignore replaces the configured ignore; the configured extend-ignore stays
    result = devlint("check", "--ignore", "DVL102", "src", cwd=project)
    assert codes(result) == [("src/mixed.py", "DVL101")]
    write_pyproject(project, 'ignore = ["DVL101"]\n')
    assert codes(devlint("check", "--extend-ignore", "DVL2", "src", cwd=project)) == []
    unknown = devlint("check", "--extend-ignore", "DVL2O1", "src", cwd=project)
    assert (unknown.returncode, unknown.stderr) == (
        2,
        "devlint: error: unknown rule code 'DVL2O1' in --extend-ignore (did you mean DVL201?)\n",
    )


def test_config_option_takes_a_directory_holding_a_pyproject(project: Path) -> None:
    """``--config DIR`` once said "no such file" of a directory that exists."""
    settings = project / "settings"
    settings.mkdir()
    write_pyproject(settings, 'ignore = ["DVL2"]\n')
    result = devlint("check", "--config", "settings", "src", cwd=project)
    assert codes(result) == [("src/mixed.py", "DVL101")]
    empty = devlint("check", "--config", "tests", "src", cwd=project)
    assert (empty.returncode, empty.stderr) == (
        2,
        "devlint: error: tests: a directory without a pyproject.toml\n",
    )
    missing = devlint("check", "--config", "missing.toml", "src", cwd=project)
    assert missing.stderr == "devlint: error: missing.toml: no such file\n"
