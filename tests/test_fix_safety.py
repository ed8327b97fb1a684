"""`devlint check --fix` changes a file's content and nothing else that is not devlint's.

Read-only files, files whose real path is outside the paths given (through a
symbolic link to a file or a directory) and hard-linked files are left alone
with a DVL005 notice; `--fix-outside-roots` writes the latter two. A written
file keeps its mode and owner. Driven through the real command.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from snippets import DISCARDED
from test_fix_cli import DISCARDED_FIXED, devlint

from devlint.frontends import cli
from devlint.running import safe_write
from devlint.running.fix_count import write_refusal

FLAG = "--fix-outside-roots"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """``outside/`` beside ``repo/``: ``x.py`` and ``pkg/mod.py``, each with a fix to apply."""
    (tmp_path / "repo").mkdir()
    (tmp_path / "outside" / "pkg").mkdir(parents=True)
    (tmp_path / "outside" / "x.py").write_text(DISCARDED)
    (tmp_path / "outside" / "pkg" / "mod.py").write_text(DISCARDED)
    return tmp_path / "outside"


def notices(result) -> list[str]:
    return [line for line in result.stdout.decode().splitlines() if " DVL005 " in line]


def names(directory: Path) -> list[str]:
    """Everything in ``directory``, hidden files included: no temporary may be left."""
    return sorted(path.name for path in directory.iterdir())


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_read_only_file_is_left_alone_with_a_notice(tmp_path: Path, jobs: str) -> None:
    path = tmp_path / "train.py"
    path.write_text(DISCARDED)
    path.chmod(0o444)  # root may write it anyway: devlint must not
    result = devlint("--fix", "--jobs", jobs, ".", cwd=tmp_path)
    assert path.read_text() == DISCARDED
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    assert notices(result) == ["train.py:1:1: DVL005 [error] not rewritten: the file is read-only"]
    assert b"DVL201" in result.stdout  # its problem is reported unfixed
    assert result.returncode == 1
    assert b"Applied 0 fixes." in result.stderr
    assert names(tmp_path) == ["train.py"]


@pytest.mark.parametrize(
    ("link", "points_to", "real"),
    [("link.py", "../outside/x.py", "x.py"), ("pkg", "../outside/pkg", "pkg/mod.py")],
    ids=["file", "directory"],
)
def test_symbolic_link_to_outside_the_paths_given_is_left_alone_unless_asked(
    tmp_path: Path, outside: Path, link: str, points_to: str, real: str
) -> None:
    (tmp_path / "repo" / link).symlink_to(points_to)
    target = outside / real
    reported = "repo/" + ("link.py" if link == "link.py" else "pkg/mod.py")

    refused = devlint("--fix", "repo", cwd=tmp_path)
    assert target.read_text() == DISCARDED
    assert notices(refused) == [
        f"{reported}:1:1: DVL005 [error] not rewritten: its real path {target.resolve()} is"
        f" outside the paths given (it is reached through a symbolic link); pass {FLAG} to write it"
    ]
    assert refused.returncode == 1

    asked = devlint("--fix", FLAG, "repo", cwd=tmp_path)
    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert target.read_text() == DISCARDED_FIXED
    assert (tmp_path / "repo" / link).is_symlink()
    assert [name for name in names(target.parent) if name.startswith(".")] == []  # no temporary


def test_a_link_named_on_the_command_line_counts_by_its_directory(
    tmp_path: Path, outside: Path
) -> None:
    """`git ls-files | xargs devlint check --fix` names each link: still not written."""
    (tmp_path / "repo" / "link.py").symlink_to("../outside/x.py")
    result = devlint("--fix", "repo/link.py", cwd=tmp_path)
    assert (outside / "x.py").read_text() == DISCARDED
    assert len(notices(result)) == 1 and FLAG in notices(result)[0]


def test_link_that_stays_inside_the_paths_given_is_written(tmp_path: Path) -> None:
    (tmp_path / "real.py").write_text(DISCARDED)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "link.py").symlink_to("../real.py")
    result = devlint("--fix", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "real.py").read_text() == DISCARDED_FIXED


def test_hard_linked_file_is_left_alone_unless_asked_then_edited_in_place(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text(DISCARDED)
    os.link(first, second)
    inode = first.stat().st_ino

    refused = devlint("--fix", ".", cwd=tmp_path)
    assert first.read_text() == second.read_text() == DISCARDED
    assert [line.split(" DVL005 ")[0] for line in notices(refused)] == ["a.py:1:1:", "b.py:1:1:"]
    assert "has 2 hard links" in notices(refused)[0] and FLAG in notices(refused)[0]

    asked = devlint("--fix", FLAG, ".", cwd=tmp_path)
    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert first.read_text() == second.read_text() == DISCARDED_FIXED  # one file, both names
    assert first.stat().st_ino == second.stat().st_ino == inode
    assert first.stat().st_nlink == 2
    assert b"Applied 1 fix." in asked.stderr  # the second name found it fixed already
    assert names(tmp_path) == ["a.py", "b.py"]


def test_written_file_keeps_its_mode_and_owner(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file another user's ownership needs root")
    path = tmp_path / "train.py"
    path.write_text(DISCARDED)
    path.chmod(0o640)
    os.chown(path, 4321, 8765)
    result = devlint("--fix", "train.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_text() == DISCARDED_FIXED
    after = path.stat()
    assert (stat.S_IMODE(after.st_mode), after.st_uid, after.st_gid) == (0o640, 4321, 8765)


def owned_by_another_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files as a user who is not root sees another user's: a new file devlint makes is the
    user's own, and cannot be given to the file's owner."""
    real_fstat = os.fstat

    def other_owner(descriptor: int) -> os.stat_result:  # the new file is not the user's
        fields = list(real_fstat(descriptor))
        fields[stat.ST_UID] += 1
        return os.stat_result(fields)

    def refuse(descriptor: int, uid: int, gid: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(safe_write.os, "fstat", other_owner)
    monkeypatch.setattr(safe_write.os, "fchown", refuse)


def test_file_whose_owner_a_new_file_cannot_have_is_written_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not root, another user's (group-writable) file: a renamed copy would change owner."""
    path = tmp_path / "train.py"
    path.write_text(DISCARDED)
    path.chmod(0o664)
    inode = path.stat().st_ino
    owned_by_another_user(monkeypatch)
    assert cli.main(["check", "--fix", str(path)]) == 0, capsys.readouterr()
    assert path.read_text() == DISCARDED_FIXED
    assert path.stat().st_ino == inode
    assert stat.S_IMODE(path.stat().st_mode) == 0o664
    assert names(tmp_path) == ["train.py"]


def test_many_files_with_jobs_only_the_refused_are_left(tmp_path: Path, outside: Path) -> None:
    repo = tmp_path / "repo"
    for index in range(20):  # enough for worker processes
        (repo / f"f{index}.py").write_text(DISCARDED)
    (repo / "ro.py").write_text(DISCARDED)
    (repo / "ro.py").chmod(0o444)
    (repo / "link.py").symlink_to("../outside/x.py")
    result = devlint("--fix", "--jobs", "2", "repo", cwd=tmp_path)
    assert {(repo / f"f{index}.py").read_text() for index in range(20)} == {DISCARDED_FIXED}
    assert (repo / "ro.py").read_text() == (outside / "x.py").read_text() == DISCARDED
    assert [line.split(":")[0] for line in notices(result)] == ["repo/link.py", "repo/ro.py"]
    assert b"Applied 20 fixes." in result.stderr


def test_diff_shows_only_what_fix_would_write_and_says_why_not_the_rest(
    tmp_path: Path, outside: Path
) -> None:
    """``--diff`` shows what ``--fix`` would do (it once showed the fixes of files ``--fix``
    leaves alone, and counted them): the others are named on stderr, with the reason."""
    repo = tmp_path / "repo"
    (repo / "ro.py").write_text(DISCARDED)
    (repo / "ro.py").chmod(0o444)
    (repo / "link.py").symlink_to("../outside/x.py")
    result = devlint("--diff", "repo", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, b"")  # nothing --fix would change
    assert result.stderr.decode().splitlines() == [
        f"devlint: repo/link.py: --fix would not rewrite it: its real path {outside / 'x.py'}"
        f" is outside the paths given (it is reached through a symbolic link); pass {FLAG}"
        " to write it",
        "devlint: repo/ro.py: --fix would not rewrite it: the file is read-only",
        "Would apply 0 fixes.",
    ]
    assert b"DVL005" not in result.stdout + result.stderr
    assert (repo / "ro.py").read_text() == (outside / "x.py").read_text() == DISCARDED
    allowed = devlint("--diff", FLAG, "repo", cwd=tmp_path)  # as --fix would write the link
    assert allowed.returncode == 1
    assert allowed.stdout.decode().startswith("--- repo/link.py\n")
    assert allowed.stdout.decode().count('+x = x.to("cuda")') == 1
    assert allowed.stderr.decode().endswith(
        "devlint: repo/ro.py: --fix would not rewrite it: the file is read-only\n"
        "Would apply 1 fix.\n"
    )


@pytest.mark.parametrize("outside_roots", [False, True])
def test_the_count_refuses_what_the_writer_refuses_in_its_words(
    tmp_path: Path, outside: Path, outside_roots: bool
) -> None:
    """``--diff`` and the summary ask ``write_refusal``, which must not write; ``--fix``
    asks ``rewrite``: the two must agree on every file and say the same."""
    repo = tmp_path / "repo"
    (repo / "ro.py").write_text(DISCARDED)
    (repo / "ro.py").chmod(0o444)
    (repo / "link.py").symlink_to("../outside/x.py")
    (repo / "plain.py").write_text(DISCARDED)
    (repo / "hard.py").write_text(DISCARDED)
    os.link(repo / "hard.py", tmp_path / "elsewhere.py")
    policy = safe_write.WritePolicy.for_paths([repo], outside_roots=outside_roots)
    for name in ("ro.py", "link.py", "plain.py", "hard.py"):
        said = write_refusal(repo / name, policy)
        try:
            safe_write.rewrite(repo / name, DISCARDED.encode(), policy)
        except safe_write.NotRewritten as refused:
            assert said == str(refused), name
        else:
            assert said is None, name
    assert write_refusal(repo / "ro.py", policy) == "the file is read-only"
    assert (write_refusal(repo / "plain.py", policy) is None) and (
        (write_refusal(repo / "link.py", policy) is None) == outside_roots
    )


# writes that fail midway: a full disk, a file-size limit -------------------------------

BIG = DISCARDED + "# padding\n" * 20_000  # 200 KB, its fix near the start


def _fsize_limit(limit: int):
    """``preexec_fn`` for a child whose writes fail past ``limit`` bytes (EFBIG: Python
    ignores SIGXFSZ), as under ``ulimit -f``."""
    import resource

    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_hard_linked_file_under_a_file_size_limit_is_left_whole(tmp_path: Path) -> None:
    """``ulimit -f 160`` and a 200 KB hard-linked file written in place: once cut at 160 KB."""
    path = tmp_path / "a.py"
    path.write_text(BIG)
    os.link(path, tmp_path / "b.py")
    result = subprocess.run(
        [sys.executable, "-m", "devlint", "check", "--no-cache", "--fix", FLAG, "a.py"],
        cwd=tmp_path,
        capture_output=True,
        preexec_fn=_fsize_limit(160 * 1024),
        check=False,
    )
    assert path.read_text() == BIG
    assert (tmp_path / "b.py").read_text() == BIG
    assert [line.split(" [")[0] for line in notices(result)] == ["a.py:1:1: DVL005"]
    assert names(tmp_path) == ["a.py", "b.py"]


def _disk_full_after(limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.pwrite`` as on a disk with room for ``limit`` more bytes past the ends of files:
    a short write, then ENOSPC. Bytes written over a file's old content need no room."""
    real_pwrite = os.pwrite
    room = [limit]

    def pwrite(descriptor: int, data: bytes, offset: int) -> int:
        size = os.stat(f"/proc/self/fd/{descriptor}").st_size
        fits = max(size - offset, 0) + room[0]
        if fits <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        written = real_pwrite(descriptor, bytes(data)[:fits], offset)
        room[0] -= max(offset + written - size, 0)
        return written

    monkeypatch.setattr(safe_write.os, "pwrite", pwrite)


def _size_limit(limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.pwrite`` as under a file-size limit of ``limit`` bytes: no byte past it."""
    real_pwrite = os.pwrite

    def pwrite(descriptor: int, data: bytes, offset: int) -> int:
        if offset >= limit:
            raise OSError(errno.EFBIG, "File too large")
        return real_pwrite(descriptor, bytes(data)[: limit - offset], offset)

    monkeypatch.setattr(safe_write.os, "pwrite", pwrite)


LONGER = BIG.replace("x.to(", "x = x.to(") + "# more\n" * 2_000
SHORTER = BIG.replace("x.to(", "x = x.to(")[:190_000]


@pytest.mark.parametrize(
    ("fault", "new"),
    [
        (lambda patch: _disk_full_after(0, patch), LONGER),
        (lambda patch: _disk_full_after(1_000, patch), LONGER),
        (lambda patch: _disk_full_after(10_000, patch), LONGER),
        (lambda patch: _size_limit(160_000, patch), LONGER),
        (lambda patch: _size_limit(160_000, patch), SHORTER),
        (lambda patch: _size_limit(1_000, patch), SHORTER),
    ],
    ids=[
        "full-longer",
        "1k-room-longer",
        "10k-room-longer",
        "limit-longer",
        "limit-shorter",
        "small-limit-shorter",
    ],
)
def test_in_place_write_that_fails_midway_leaves_the_old_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault, new: str
) -> None:
    path = tmp_path / "a.py"
    path.write_text(BIG)
    os.link(path, tmp_path / "b.py")
    fault(monkeypatch)
    policy = safe_write.WritePolicy.for_paths([tmp_path], outside_roots=True)
    with pytest.raises(OSError):
        safe_write.rewrite(path, new.encode(), policy)
    assert path.read_text() == BIG


def test_another_users_file_on_a_full_disk_is_left_whole_with_a_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Plain ``--fix`` on a group-writable file of another user is written in place."""
    path = tmp_path / "train.py"
    path.write_text(BIG)
    path.chmod(0o664)
    owned_by_another_user(monkeypatch)
    _disk_full_after(0, monkeypatch)
    assert cli.main(["check", "--no-cache", "--fix", str(path)]) == 1
    assert path.read_text() == BIG
    assert "DVL005 [error] not rewritten: No space left on device" in capsys.readouterr().out
    assert names(tmp_path) == ["train.py"]


def test_in_place_write_that_succeeds_gives_exactly_the_new_content(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.py"
    path.write_text(BIG)
    os.link(path, tmp_path / "b.py")
    policy = safe_write.WritePolicy.for_paths([tmp_path], outside_roots=True)
    for new in (BIG[:1000], BIG + "# more\n", ""):
        safe_write.rewrite(path, new.encode(), policy)
        assert (tmp_path / "b.py").read_text() == new
