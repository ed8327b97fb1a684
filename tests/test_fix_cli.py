"""`devlint check --fix / --diff / --unsafe-fixes` end to end, through the real command."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from snippets import DISCARDED

from devlint.frontends import cli
from devlint.running import fix, safe_write

DISCARDED_FIXED = 'import torch\n\nx = torch.ones(3)\nx = x.to("cuda")\n'
ATTRIBUTE = """\
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.ones(4)

    def forward(self, x):
        return x * self.scale


Block().to("cuda")(torch.ones(2, 4, device="cuda"))
"""
REGISTERED = '        self.register_buffer("scale", scale, persistent=False)\n'
ATTRIBUTE_FIXED = ATTRIBUTE.replace(
    "        self.scale = torch.ones(4)\n", "        scale = torch.ones(4)\n" + REGISTERED
)
CLEAN = 'import torch\n\nx = torch.ones(3, device="cuda")\n'


def devlint(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "devlint", "check", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )


def test_fix_rewrites_the_file_and_exits_zero_when_nothing_is_left(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(DISCARDED)
    result = devlint("--fix", "train.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert path.read_text() == DISCARDED_FIXED
    assert b"Applied 1 fix." in result.stderr


def test_fix_reports_what_it_could_not_fix(tmp_path: Path) -> None:
    mixed = DISCARDED + 'y = torch.ones(3) + torch.ones(3, device="cuda")\n'
    (tmp_path / "train.py").write_text(mixed)
    result = devlint("--fix", "train.py", cwd=tmp_path)
    assert result.returncode == 1
    assert (tmp_path / "train.py").read_text() == mixed.replace("x.to(", "x = x.to(")
    assert result.stdout.decode().startswith("train.py:5:5: DVL101")
    assert b"DVL201" not in result.stdout


def test_unsafe_fixes_need_the_flag(tmp_path: Path) -> None:
    path = tmp_path / "block.py"
    path.write_text(ATTRIBUTE)
    safe_only = devlint("--fix", "block.py", cwd=tmp_path)
    assert safe_only.returncode == 1
    assert path.read_text() == ATTRIBUTE
    assert b"DVL104" in safe_only.stdout
    unsafe = devlint("--fix", "--unsafe-fixes", "block.py", cwd=tmp_path)
    assert unsafe.returncode == 0, unsafe.stdout + unsafe.stderr
    assert path.read_text() == ATTRIBUTE_FIXED


def test_diff_prints_a_unified_diff_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(DISCARDED)
    result = devlint("--diff", "train.py", cwd=tmp_path)
    assert result.returncode == 1
    assert path.read_text() == DISCARDED
    assert result.stdout.decode() == (
        "--- train.py\n+++ train.py\n@@ -1,4 +1,4 @@\n import torch\n \n x = torch.ones(3)\n"
        '-x.to("cuda")\n+x = x.to("cuda")\n'
    )
    if shutil.which("patch"):  # the diff applies with the standard tool
        patch = ["patch", "-p0", "--dry-run"]
        applied = subprocess.run(patch, cwd=tmp_path, input=result.stdout, capture_output=True)
        assert applied.returncode == 0, applied.stdout + applied.stderr


def test_diff_exits_zero_without_fixable_changes(tmp_path: Path) -> None:
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "block.py").write_text(ATTRIBUTE)  # only an unsafe fix
    result = devlint("--diff", ".", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == b""
    assert b"1 more with --unsafe-fixes" in result.stderr
    assert devlint("--diff", "--unsafe-fixes", ".", cwd=tmp_path).returncode == 1


def test_fix_on_stdin_prints_the_fixed_source_only(tmp_path: Path) -> None:
    result = devlint("--fix", "-", cwd=tmp_path, stdin=DISCARDED.encode())
    assert result.stdout == DISCARDED_FIXED.encode()
    assert result.returncode == 0


def test_fix_on_stdin_echoes_unfixable_input_and_reports_on_stderr(tmp_path: Path) -> None:
    source = 'import torch\ny = torch.ones(3) + torch.ones(3, device="cuda")\r\n'
    result = devlint("--fix", "--stdin-filename", "e.py", "-", cwd=tmp_path, stdin=source.encode())
    assert result.stdout == source.encode()
    assert b"e.py:2:" in result.stderr
    assert result.returncode == 1
    garbage = b"\xff\xfe not python \x00"
    assert devlint("--fix", "-", cwd=tmp_path, stdin=garbage).stdout == garbage


def test_diff_on_stdin(tmp_path: Path) -> None:
    result = devlint(
        "--diff", "--stdin-filename", "t.py", "-", cwd=tmp_path, stdin=DISCARDED.encode()
    )
    assert result.returncode == 1
    assert b'+x = x.to("cuda")' in result.stdout


def test_write_is_atomic_and_keeps_mode_line_endings_and_encoding(tmp_path: Path) -> None:
    path = tmp_path / "block.py"
    source = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + ATTRIBUTE
    path.write_bytes(source.replace("\n", "\r\n").encode("latin-1"))
    path.chmod(0o640)
    inode = path.stat().st_ino
    result = devlint("--fix", "--unsafe-fixes", "block.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    expected = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + ATTRIBUTE_FIXED
    assert path.read_bytes() == expected.replace("\n", "\r\n").encode("latin-1")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert path.stat().st_ino != inode  # replaced, not written in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["block.py"]  # no temporary left


def test_byte_order_mark_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_bytes(b"\xef\xbb\xbf" + DISCARDED.encode())
    assert devlint("--fix", "train.py", cwd=tmp_path).returncode == 0
    assert path.read_bytes() == b"\xef\xbb\xbf" + DISCARDED_FIXED.encode()


def test_symbolic_link_stays_a_link_and_its_target_is_fixed(tmp_path: Path) -> None:
    target = tmp_path / "real.py"
    target.write_text(DISCARDED)
    link = tmp_path / "link.py"
    link.symlink_to(target)
    assert devlint("--fix", "link.py", cwd=tmp_path).returncode == 0
    assert link.is_symlink()
    assert target.read_text() == DISCARDED_FIXED


def test_file_libcst_cannot_round_trip_is_never_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    source = DISCARDED + "\n    # a trailing indented comment, no final newline"
    path.write_text(source)
    result = devlint("--fix", "train.py", cwd=tmp_path)
    assert path.read_text() == source
    assert result.returncode == 1
    assert b"train.py: not rewritten: LibCST does not reproduce this file exactly" in result.stderr
    assert b"DVL201" in result.stdout


def test_failed_write_is_reported_and_leaves_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "train.py"
    path.write_text(DISCARDED)

    def refuse(source: str, target: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(safe_write.os, "replace", refuse)
    assert cli.main(["check", "--fix", str(path)]) == 1
    assert path.read_text() == DISCARDED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]
    captured = capsys.readouterr()
    assert "train.py:1:1: DVL005 [error] not rewritten: Permission denied" in captured.out
    assert "DVL201" in captured.out


def test_many_files_are_fixed_by_worker_processes(tmp_path: Path) -> None:
    for index in range(20):
        (tmp_path / f"f{index}.py").write_text(DISCARDED)
    result = devlint("--fix", "--jobs", "2", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert {p.read_text() for p in tmp_path.glob("*.py")} == {DISCARDED_FIXED}
    assert b"Applied 20 fixes." in result.stderr


def test_a_file_edited_while_its_fixes_were_computed_is_left_alone(tmp_path: Path) -> None:
    """Workers compute fixes and the main process writes them: an editor may save between."""
    path = tmp_path / "train.py"
    path.write_text(DISCARDED)
    result = fix.fix_file(path, write=False)
    assert result.changed and path.read_text() == DISCARDED
    path.write_text(DISCARDED + "# saved meanwhile\n")
    written = fix.write_fixed(path, result)
    assert path.read_text() == DISCARDED + "# saved meanwhile\n"
    assert not written.changed and [d.code for d in written.diagnostics] == ["DVL201", "DVL005"]
    assert written.diagnostics[-1].message == (
        "not rewritten: the file changed while it was being fixed"
    )


def test_exit_non_zero_on_fix_exits_1_when_a_file_changed(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(DISCARDED)
    (tmp_path / "clean.py").write_text(CLEAN)
    result = devlint("--fix", "--exit-non-zero-on-fix", "train.py", "clean.py", cwd=tmp_path)
    assert path.read_text() == DISCARDED_FIXED
    assert (result.returncode, result.stdout) == (1, b"")  # nothing left, but a file changed
    assert devlint("--fix", "--exit-non-zero-on-fix", ".", cwd=tmp_path).returncode == 0
    stdin = devlint("--fix", "--exit-non-zero-on-fix", "-", cwd=tmp_path, stdin=DISCARDED.encode())
    assert (stdin.returncode, stdin.stdout) == (1, DISCARDED_FIXED.encode())
    both = devlint("--fix", "--exit-non-zero-on-fix", "--exit-zero", ".", cwd=tmp_path)
    assert both.returncode == 2
    assert b"not allowed with argument" in both.stderr


REVEALING = """\
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda")
loader = DataLoader(TensorDataset(torch.randn(8, 2), torch.randn(8, 2)), batch_size=2)
model = nn.Linear(2, 2).to(device)
for inputs, targets in loader:
    out = model(inputs.to(device))
    loss = (out - targets).sum()
    other = (out * targets).sum()
"""
"""One finding (DVL301 at line 10) whose fix reveals the next use of `targets`: --fix
applies two fixes."""


def summary_line(result: subprocess.CompletedProcess) -> str:
    return result.stderr.decode().splitlines()[-1]


def test_the_fixable_count_is_what_fix_applies_and_diff_shows(tmp_path: Path) -> None:
    """The summary once counted the findings that carry a fix (1 here), --fix applies 2."""
    path = tmp_path / "train.py"
    path.write_text(REVEALING)
    check = devlint("train.py", cwd=tmp_path)
    assert summary_line(check) == "Found 1 problem in 1 file (DVL301: 1); 2 fixable with --fix."
    diff = devlint("--diff", "train.py", cwd=tmp_path)
    assert diff.stdout.decode().count("targets.to(device)") == 2
    assert summary_line(diff) == "Would apply 2 fixes."
    assert summary_line(devlint("--fix", "train.py", cwd=tmp_path)) == "Applied 2 fixes."
    assert path.read_text().count("targets.to(device)") == 2


def test_no_fix_is_counted_in_a_file_fix_would_not_rewrite(tmp_path: Path) -> None:
    """A read-only file, a file LibCST does not reproduce: --fix refuses them, so neither
    the summary nor --statistics nor --diff offers their fixes."""
    (tmp_path / "read_only.py").write_text(DISCARDED)
    (tmp_path / "read_only.py").chmod(0o444)
    (tmp_path / "odd.py").write_text(DISCARDED + "\n    # a trailing indented comment")
    check = devlint(".", cwd=tmp_path)
    assert summary_line(check) == "Found 2 problems in 2 files (DVL201: 2)."
    statistics = devlint("--statistics", ".", cwd=tmp_path)
    assert statistics.stdout.decode() == "2  DVL201      transfer-result-discarded\n"
    diff = devlint("--diff", ".", cwd=tmp_path)
    assert (diff.returncode, diff.stdout) == (0, b"")
    assert diff.stderr.decode().splitlines() == [
        "devlint: odd.py: not rewritten: LibCST does not reproduce this file exactly (a LibCST"
        " bug); fix it by hand",
        "devlint: read_only.py: --fix would not rewrite it: the file is read-only",
        "Would apply 0 fixes.",
    ]
    assert summary_line(devlint("--fix", ".", cwd=tmp_path)) == "Applied 0 fixes."


def test_a_fix_whose_result_would_not_parse_is_not_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fix that breaks the code (a devlint bug) is refused by --fix: not counted either."""
    path = tmp_path / "train.py"
    path.write_text(DISCARDED)
    real = fix.apply_fixes

    def breaking(text: str, fixes: list) -> tuple[str, list]:
        fixed, applied = real(text, fixes)
        return fixed + "(\n", applied

    monkeypatch.setattr(fix, "apply_fixes", breaking)
    assert cli.main(["check", "--no-cache", "--statistics", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == "1  DVL201      transfer-result-discarded\n"
    assert err == "Found 1 problem in 1 file (DVL201: 1).\n"
    assert cli.main(["check", "--diff", str(path)]) == 0
    assert capsys.readouterr().err.endswith(
        "a fix produced code that does not parse (a devlint bug); it was not applied\n"
        "Would apply 0 fixes.\n"
    )


def test_unsafe_fixes_are_counted_apart_unless_they_are_enabled(tmp_path: Path) -> None:
    (tmp_path / "block.py").write_text(ATTRIBUTE)
    check = devlint("block.py", cwd=tmp_path)
    assert summary_line(check) == "Found 1 problem in 1 file (DVL104: 1); 1 with --unsafe-fixes."
    enabled = devlint("--unsafe-fixes", "block.py", cwd=tmp_path)
    assert summary_line(enabled) == "Found 1 problem in 1 file (DVL104: 1); 1 fixable with --fix."
    statistics = devlint("--unsafe-fixes", "--statistics", "block.py", cwd=tmp_path)
    assert statistics.stdout.decode() == "1  DVL104  [*] unregistered-tensor-attribute\n"
    diff = devlint("--diff", "--unsafe-fixes", "block.py", cwd=tmp_path)
    assert summary_line(diff) == "Would apply 1 fix."


def test_the_count_of_standard_input_is_what_fix_prints(tmp_path: Path) -> None:
    check = devlint("-", cwd=tmp_path, stdin=REVEALING.encode())
    assert summary_line(check) == "Found 1 problem in 1 file (DVL301: 1); 2 fixable with --fix."


def test_counting_fixes_lints_only_the_fixed_text_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run already linted the file: the count of what ``--fix`` would apply starts from
    those findings and lints the text the fixes make, not the file a second time."""
    path = tmp_path / "train.py"
    path.write_text(DISCARDED)
    linted: list[str] = []
    real_lint = fix.lint_source
    monkeypatch.setattr(
        fix, "lint_source", lambda text, *a, **k: linted.append(text) or real_lint(text, *a, **k)
    )
    assert cli.main(["check", "--no-cache", "--jobs", "1", str(path)]) == 1
    assert capsys.readouterr().err.endswith("(DVL201: 1); 1 fixable with --fix.\n")
    assert linted == [DISCARDED_FIXED]
