"""`devlint check --add-noqa` through the real command: a `# noqa: CODE` on every line with a
finding, merged with a `# noqa` that is there, written as `--fix` writes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from snippets import DISCARDED
from test_fix_cli import devlint

from devlint.diagnostic import Diagnostic
from devlint.running.add_noqa import with_noqa

ROOT = Path(__file__).resolve().parent.parent

SOURCE = """\
import torch


def run():
    a = torch.zeros(3, device="cuda")
    b = torch.ones(3)
    return a + b  # noqa: E501


x = torch.ones(3)
x.to("cuda")   \n\
x.to("cuda")  # keep this comment
"""
SILENCED = """\
import torch


def run():
    a = torch.zeros(3, device="cuda")
    b = torch.ones(3)
    return a + b  # noqa: E501, DVL101


x = torch.ones(3)
x.to("cuda")  # noqa: DVL201
x.to("cuda")  # keep this comment  # noqa: DVL201
"""


def test_every_reported_line_gets_its_codes_and_the_file_is_then_clean(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(SOURCE)
    done = devlint("--add-noqa", "train.py", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, b"")
    assert done.stderr.decode().splitlines() == [
        "No problems found in 1 file.",
        "Added # noqa to silence 3 problems.",
    ]
    assert path.read_text() == SILENCED
    assert devlint("train.py", cwd=tmp_path).returncode == 0
    again = devlint("--add-noqa", "train.py", cwd=tmp_path)
    assert again.stderr.decode().endswith("Added # noqa to silence 0 problems.\n")
    assert path.read_text() == SILENCED


def test_line_endings_encoding_and_byte_order_mark_are_kept(tmp_path: Path) -> None:
    crlf = tmp_path / "crlf.py"
    latin = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + DISCARDED
    crlf.write_bytes(latin.replace("\n", "\r\n").encode("latin-1"))
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + DISCARDED.replace("\n", "\r").encode())
    assert devlint("--add-noqa", ".", cwd=tmp_path).returncode == 0
    silenced = latin.replace('x.to("cuda")\n', 'x.to("cuda")  # noqa: DVL201\n')
    assert crlf.read_bytes() == silenced.replace("\n", "\r\n").encode("latin-1")
    expected = DISCARDED.replace('x.to("cuda")\n', 'x.to("cuda")  # noqa: DVL201\n')
    assert bom.read_bytes() == b"\xef\xbb\xbf" + expected.replace("\n", "\r").encode()


def test_a_line_that_cannot_take_a_comment_is_left_and_named(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    source = (
        "import torch\n\nx = torch.ones(3)\n"
        'y = x + torch.ones(3, device="cuda") + len("""\n""")\n'
        'z = x + \\\n    torch.ones(3, device="cuda")\n'
        'x.to("cuda")\n'
    )
    path.write_text(source)
    done = devlint("--add-noqa", "m.py", cwd=tmp_path)
    assert done.returncode == 1
    assert [line.split(": ")[0] for line in done.stdout.decode().splitlines()] == [
        "m.py:4:5",
        "m.py:6:5",
    ]
    assert done.stderr.decode().splitlines()[0] == (
        "devlint: m.py: no # noqa on line 4: it ends inside a string;"
        " no # noqa on line 6: it ends in a backslash that continues it"
    )
    assert path.read_text() == source.replace('x.to("cuda")\n', 'x.to("cuda")  # noqa: DVL201\n')


def test_the_write_policy_of_fix_applies(tmp_path: Path) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    (repo / "read_only.py").write_text(DISCARDED)
    (repo / "read_only.py").chmod(0o444)
    (outside / "x.py").write_text(DISCARDED)
    (repo / "link.py").symlink_to("../outside/x.py")
    done = devlint("--add-noqa", "repo", cwd=tmp_path)
    assert done.returncode == 1
    notices = [line for line in done.stdout.decode().splitlines() if " DVL005 " in line]
    assert [line.split(":")[0] for line in notices] == ["repo/link.py", "repo/read_only.py"]
    assert "not rewritten: the file is read-only" in notices[1]
    assert (repo / "read_only.py").read_text() == (outside / "x.py").read_text() == DISCARDED
    allowed = devlint("--add-noqa", "--fix-outside-roots", "repo", cwd=tmp_path)
    assert "# noqa: DVL201" in (outside / "x.py").read_text()
    assert b"DVL005" in allowed.stdout  # the read-only file still is not written


def test_notebooks_are_left_as_they_are_and_reported(tmp_path: Path) -> None:
    notebook = tmp_path / "nb.ipynb"
    shutil.copy(ROOT / "fixtures" / "notebooks" / "batch_not_moved.ipynb", notebook)
    before = notebook.read_bytes()
    (tmp_path / "d.py").write_text(DISCARDED)
    done = devlint("--add-noqa", ".", cwd=tmp_path)
    assert notebook.read_bytes() == before
    assert done.returncode == 1
    assert done.stdout.decode().startswith("nb.ipynb:cell 6:5:41: DVL301 ")
    assert b"devlint: nb.ipynb: --add-noqa leaves notebooks as they are\n" in done.stderr
    assert "# noqa: DVL201" in (tmp_path / "d.py").read_text()


@pytest.mark.parametrize("other", [["--fix"], ["--diff"], ["-"]])
def test_add_noqa_goes_with_no_other_edit_nor_standard_input(
    tmp_path: Path, other: list[str]
) -> None:
    (tmp_path / "d.py").write_text(DISCARDED)
    done = devlint("--add-noqa", *other, "d.py", cwd=tmp_path, stdin=DISCARDED.encode())
    assert done.returncode == 2
    assert done.stderr == (
        b"devlint: error: --add-noqa edits the files given: not with --fix, --diff or -\n"
    )
    assert (tmp_path / "d.py").read_text() == DISCARDED


def test_codes_on_one_line_are_sorted_and_an_uppercase_noqa_is_extended() -> None:
    def at(line: int, code: str) -> Diagnostic:
        return Diagnostic("t.py", line, 0, line, 1, code, "m")

    source = "a = 1\nb = 2  # NOQA:E501\n"
    text, skipped = with_noqa(source, [at(1, "DVL201"), at(1, "DVL101"), at(2, "DVL101")])
    assert (text, skipped) == ("a = 1  # noqa: DVL101, DVL201\nb = 2  # NOQA:E501, DVL101\n", {})


def test_comments_that_would_not_silence_their_findings_are_not_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The result is linted again before anything is written: a comment in the wrong place
    (a bug) leaves the file as it was, and says so."""
    from devlint.config import DEFAULT_SETTINGS
    from devlint.running import add_noqa

    def misplaced(source: str, findings: list[Diagnostic]) -> tuple[str, dict[int, str]]:
        return source.replace("\n\n", "\n# noqa: DVL201\n", 1), {}  # line 2, not 4

    monkeypatch.setattr(add_noqa, "with_noqa", misplaced)
    result = add_noqa.add_noqa_bytes(DISCARDED.encode(), "d.py", DEFAULT_SETTINGS)
    assert not result.changed and result.applied == 0
    assert [d.code for d in result.diagnostics] == ["DVL201"]
    assert result.problem == (
        "not rewritten: the # noqa comments would not silence what they name (a devlint bug)"
    )
