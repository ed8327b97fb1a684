"""Broken input never stops a run: each bad file gets one message naming it, others are linted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest
from snippets import DISCARDED, MIXED

from devlint.config import Settings
from devlint.frontends import cli
from devlint.project.files import iter_source_files
from devlint.running import engine

running_as_root = pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="root reads files and directories whatever their permissions",
)


def devlint(*args: str, cwd: Path, **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "devlint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        **options,
    )


def reports(output: str) -> dict[str, list[str]]:
    """Path → the ``CODE message`` texts reported for it (severity left out)."""
    found: dict[str, list[str]] = {}
    for line in output.splitlines():
        path, _, _, text = line.split(":", 3)
        code, _severity, message = text.strip().split(" ", 2)
        found.setdefault(path, []).append(f"{code} {message}")
    return found


def check(tmp_path: Path, *args: str) -> dict[str, list[str]]:
    """Lint ``tmp_path`` next to a known-buggy file, which must still be reported."""
    (tmp_path / "buggy.py").write_text(MIXED)
    result = devlint("check", *args, ".", cwd=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1
    found = reports(result.stdout)
    assert [text.split()[0] for text in found.pop("buggy.py")] == ["DVL101"]
    return found


def test_unparseable_file(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import torch\n\ndef f(:\n    pass\n")
    [message] = check(tmp_path)["broken.py"]
    assert message.startswith("DVL001 cannot parse")


def test_invalid_utf8(tmp_path: Path) -> None:
    (tmp_path / "latin.py").write_bytes(b"import torch\nname = '\xe9t\xe9'\n")
    [message] = check(tmp_path)["latin.py"]
    assert message.startswith("DVL002 cannot decode file")


def test_binary_file_named_py(tmp_path: Path) -> None:
    (tmp_path / "blob.py").write_bytes(b"\x7fELF\x00\x01torch\x00\xff" * 10)
    assert check(tmp_path)["blob.py"] == [
        "DVL002 cannot decode file: binary file (contains NUL bytes) (not analysed)"
    ]


def test_empty_file_is_clean(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_bytes(b"")
    assert check(tmp_path) == {}


def test_dangling_symlink(tmp_path: Path) -> None:
    (tmp_path / "gone.py").symlink_to(tmp_path / "deleted.py")
    assert check(tmp_path)["gone.py"] == ["DVL002 cannot read file: No such file or directory"]


def test_file_symlink_loop(tmp_path: Path) -> None:
    (tmp_path / "loop.py").symlink_to("loop.py")
    [message] = check(tmp_path)["loop.py"]
    assert message.startswith("DVL002 cannot read file")


def test_directory_symlink_loop_ends_and_lints_each_file_once(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "up").symlink_to("..")
    (tmp_path / "pkg" / "self").symlink_to(".")
    (tmp_path / "pkg" / "m.py").write_text(DISCARDED)
    found = check(tmp_path)
    assert [(path, [text.split()[0] for text in texts]) for path, texts in found.items()] == [
        ("pkg/m.py", ["DVL201"])
    ]


def test_symlink_loop_given_explicitly(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    result = devlint("check", "a", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith("a:1:1: DVL002 [error] cannot read file: ")
    assert "Traceback" not in result.stderr


@running_as_root
def test_unreadable_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text(MIXED)
    secret.chmod(0)
    assert check(tmp_path)["secret.py"] == ["DVL002 cannot read file: Permission denied"]


@running_as_root
def test_unreadable_directory(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        assert check(tmp_path)["locked"] == [
            "DVL002 cannot read directory: Permission denied (skipped)"
        ]
    finally:
        locked.chmod(0o755)


def test_unreadable_directory_is_an_entry_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "locked").mkdir()
    (tmp_path / "open").mkdir()
    (tmp_path / "open" / "m.py").write_text("")
    real_scandir = os.scandir

    def scandir(path: Path) -> object:
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    entries = [(entry.path.name, entry.skip_reason) for entry in iter_source_files([tmp_path])]
    assert entries == [
        ("locked", "cannot read directory: Permission denied"),
        ("m.py", None),
    ]


def test_notices_can_be_ignored_by_full_code(tmp_path: Path) -> None:
    (tmp_path / "blob.py").write_bytes(b"\x00")
    assert check(tmp_path, "--ignore", "DVL002") == {}


def test_thousands_of_files_in_parallel(tmp_path: Path) -> None:
    for index in range(2000):
        package = tmp_path / f"pkg{index // 100:02}"
        package.mkdir(exist_ok=True)
        source = DISCARDED if index % 400 == 0 else "import torch\n\ny = torch.ones(2) * 2\n"
        (package / f"m{index:04}.py").write_text(source)
    result = devlint("check", "--jobs", "2", ".", cwd=tmp_path)
    assert "Traceback" not in result.stderr
    assert sorted(reports(result.stdout)) == [
        f"pkg{index // 100:02}/m{index:04}.py" for index in range(0, 2000, 400)
    ]
    assert result.stderr.strip() == (
        "Found 5 problems in 5 of 2000 files (DVL201: 5); 5 fixable with --fix."
    )


def test_internal_error_in_analysis_names_the_file_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real_analyse = engine.analyse

    def analyse(module: cst.Module, settings: Settings, importer: object = None) -> object:
        if "explode" in module.code:
            raise RuntimeError("analysis exploded")
        return real_analyse(module, settings, importer)

    monkeypatch.setattr(engine, "analyse", analyse)
    (tmp_path / "a_explode.py").write_text("import torch\nexplode = torch.ones(1)\n")
    (tmp_path / "buggy.py").write_text(MIXED)
    assert cli.main(["check", str(tmp_path)]) == 1
    found = reports(capsys.readouterr().out)
    assert found[str(tmp_path / "a_explode.py")] == [
        "DVL003 internal error: RuntimeError: analysis exploded"
    ]
    assert found[str(tmp_path / "buggy.py")][0].startswith("DVL101 ")


def test_internal_error_outside_analysis_names_the_file_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real_lint_file = cli.lint_file

    def lint_file(path: Path, settings: Settings, trees: object = None) -> object:
        if path.name == "a_bad.py":
            raise MemoryError("no memory left")
        return real_lint_file(path, settings, trees)

    monkeypatch.setattr(cli, "lint_file", lint_file)
    (tmp_path / "a_bad.py").write_text("")
    (tmp_path / "buggy.py").write_text(MIXED)
    assert cli.main(["check", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    found = reports(captured.out)
    assert found[str(tmp_path / "a_bad.py")] == [
        "DVL003 internal error: MemoryError: no memory left"
    ]
    assert found[str(tmp_path / "buggy.py")][0].startswith("DVL101 ")
    assert captured.err == "Found 2 problems in 2 files (DVL003: 1, DVL101: 1).\n"


# files too large to read ---------------------------------------------------------------

HUGE = 20 << 30
"""A 20 GB (sparse) file: read whole, it ended the run with MemoryError."""


def sparse(path: Path, size: int = HUGE) -> None:
    with open(path, "wb") as stream:
        stream.truncate(size)


def devlint_in_4_gb(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``devlint`` with at most 4 GB of address space: a file read whole would not fit."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    return devlint(*args, cwd=cwd, preexec_fn=limit)


TOO_LARGE = (
    f"DVL004 file too large to analyse: {HUGE:,} bytes, over the limit of 10,000,000 (skipped)"
)


@pytest.mark.parametrize("options", [["--no-cache"], ["--fix"], ["--format", "sarif"]])
def test_a_huge_file_in_the_tree_is_skipped_unread(tmp_path: Path, options: list[str]) -> None:
    (tmp_path / "buggy.py").write_text(MIXED)
    sparse(tmp_path / "big.py")
    result = devlint_in_4_gb("check", *options, ".", cwd=tmp_path)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert result.returncode == 1, result.stderr
    if options[0] != "--format":
        assert reports(result.stdout)["big.py"] == [TOO_LARGE]


def test_a_huge_module_imported_or_named_by_a_cache_entry_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "big.py").write_text("import torch\n\nSIZE = 3\n")
    (tmp_path / "train.py").write_text("import torch\nfrom big import SIZE\n\n" + MIXED)
    first = devlint_in_4_gb("check", "train.py", cwd=tmp_path)  # its entry names big.py
    assert reports(first.stdout)["train.py"][0].startswith("DVL101"), first.stderr
    sparse(tmp_path / "big.py")
    for options in ([], ["--no-cache"]):
        again = devlint_in_4_gb("check", *options, "train.py", cwd=tmp_path)
        assert again.returncode == 1, again.stderr
        assert reports(again.stdout) == reports(first.stdout)


def test_a_huge_notebook_is_skipped_unread(tmp_path: Path) -> None:
    sparse(tmp_path / "big.ipynb")
    result = devlint_in_4_gb("check", "--no-cache", "big.ipynb", cwd=tmp_path)
    assert reports(result.stdout)["big.ipynb"] == [
        f"DVL004 file too large to analyse: {HUGE:,} bytes, over the limit of 100,000,000 (skipped)"
    ]


# what LibCST refuses: the user's syntax error, or LibCST's limitation -----------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "import torch\nx = 1\ny = 'abc\nz = 2\n",
            "3:5: DVL001 [error] cannot parse: unterminated string literal (detected at line 3)",
        ),
        (
            "import torch\nx = 1\ny = (1, 2\n",
            "3:5: DVL001 [error] cannot parse: '(' was never closed",
        ),
        (
            "import torch\nif x:\n        y = 1\n    z = 2\n",
            "4:10: DVL001 [error] cannot parse: unindent does not match any outer"
            " indentation level",
        ),
    ],
    ids=["unterminated-string", "unclosed-bracket", "bad-dedent"],
)
def test_a_syntax_error_is_reported_where_python_finds_it(
    tmp_path: Path, source: str, expected: str
) -> None:
    """LibCST's tokenizer put all of these at 1:1, and its parser's message for an unclosed
    bracket lists thirty tokens."""
    (tmp_path / "broken.py").write_text(source)
    result = devlint("check", "--no-cache", "broken.py", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith(f"broken.py:{expected} (not analysed)\n"), result.stdout


VALID_BUT_REFUSED = {
    "continuation-before-a-block-line": "import torch\n\ndef f():\n    \\\n    return 1\n",
    "continuation-before-else": "import torch\nif x:\n    pass\n\\\nelse:\n    pass\n",
}


@pytest.mark.parametrize("source", VALID_BUT_REFUSED.values(), ids=VALID_BUT_REFUSED.keys())
def test_valid_python_that_libcst_refuses_is_a_warning_about_devlint(
    tmp_path: Path, source: str
) -> None:
    compile(source, "valid.py", "exec")  # Python accepts it
    (tmp_path / "valid.py").write_text(source)
    result = devlint("check", "--no-cache", "valid.py", cwd=tmp_path)
    [line] = result.stdout.splitlines()
    assert " DVL006 [warning] Python accepts this file, but LibCST, devlint's parser," in line
    assert line.endswith("(not analysed)")
    assert "DVL001" not in result.stdout


def test_a_notebook_cell_libcst_refuses_is_a_warning_at_the_cell(tmp_path: Path) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(VALID_BUT_REFUSED["continuation-before-a-block-line"]),
        nbformat.v4.new_code_cell("import torch\nx = torch.ones(3)\nx.to('cuda')\ny = 1\n"),
    ]
    nbformat.write(notebook, tmp_path / "nb.ipynb")
    result = devlint("check", "--no-cache", "nb.ipynb", cwd=tmp_path)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("nb.ipynb:cell 1:5:1: DVL006 [warning] Python accepts cell 1, but")
    assert lines[0].endswith("(cell not analysed)")
    assert lines[1].startswith("nb.ipynb:cell 2:3:1: DVL201 ")
