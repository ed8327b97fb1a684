"""Directories that cannot be searched and files that are not regular files (FIFOs,
devices) get a notice each; the rest of the run goes on, and nothing blocks."""

from __future__ import annotations

import os
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from snippets import MIXED

from devlint.frontends import cli

NOBODY = 65534
DENIED = "Permission denied"


def devlint(*args: str, cwd: Path, as_user: bool = False) -> subprocess.CompletedProcess[str]:
    """``devlint`` in a subprocess with a time limit, so that a hang fails instead of hanging,
    and a memory limit, so that reading a device forever fails at once (``--jobs 1``: one
    process to limit). ``as_user``: run as ``nobody`` (from root, through ``setpriv``)."""
    prefix = as_nobody() if as_user else []
    return subprocess.run(
        [*prefix, sys.executable, "-m", "devlint", "check", "--jobs", "1", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)),
    )


def as_nobody() -> list[str]:
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def reported(stdout: str) -> dict[str, str]:
    """Path → the first ``CODE message`` reported for it (severity left out)."""
    found: dict[str, str] = {}
    for line in stdout.splitlines():
        path, _, _, text = line.split(":", 3)
        code, _severity, message = text.strip().split(" ", 2)
        found.setdefault(path, f"{code} {message}")
    return found


def project(root: Path) -> None:
    """A buggy file beside ``locked/sub/x.py``."""
    (root / "buggy.py").write_text(MIXED)
    (root / "locked" / "sub").mkdir(parents=True)
    (root / "locked" / "sub" / "x.py").write_text(MIXED)


# directories that cannot be searched ------------------------------------------


def deny_search(monkeypatch: pytest.MonkeyPatch, locked: Path) -> None:
    """Make ``locked`` behave as mode 000 does for a user who is not root: listing it, and
    any system call on a path below it, fail with EACCES (root ignores the mode itself)."""
    locked_path = os.path.abspath(locked)

    def guarded(real: Callable[..., object], *, itself: bool) -> Callable[..., object]:
        def call(path: object, *args: object, **kwargs: object) -> object:
            if isinstance(path, (str, os.PathLike)):
                absolute = os.path.abspath(os.fspath(path))
                if absolute.startswith(locked_path + os.sep) or (
                    itself and absolute == locked_path
                ):
                    raise PermissionError(13, DENIED, os.fspath(path))
            return real(path, *args, **kwargs)

        return call

    for name in ("stat", "lstat", "open"):
        monkeypatch.setattr(os, name, guarded(getattr(os, name), itself=False))
    monkeypatch.setattr(os, "scandir", guarded(os.scandir, itself=True))


def test_an_unsearchable_directory_is_a_notice_and_the_rest_is_linted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.devlint]\n")  # the cache goes here
    deny_search(monkeypatch, tmp_path / "locked")
    monkeypatch.chdir(tmp_path)

    assert cli.main(["check", "."]) == 1
    output = capsys.readouterr()
    assert "internal error" not in output.err, output.err
    assert reported(output.out) == {
        "buggy.py": f"DVL101 {reported_mixed()}",
        "locked": f"DVL002 cannot read directory: {DENIED} (skipped)",
    }


def test_an_explicit_path_below_an_unsearchable_directory_is_a_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project(tmp_path)
    deny_search(monkeypatch, tmp_path / "locked")
    monkeypatch.chdir(tmp_path)

    for paths in (["locked/sub/x.py", "buggy.py"], ["locked/sub/x.py"], ["locked/sub"]):
        status = cli.main(["check", *paths])  # the config lookup starts below `locked` too
        output = capsys.readouterr()
        assert "internal error" not in output.err and "no such file" not in output.err
        assert status == 1
        found = reported(output.out)
        assert found.pop(paths[0]) == f"DVL002 cannot access: {DENIED} (skipped)"
        assert list(found) == paths[1:]


def reported_mixed() -> str:
    """What ``MIXED`` is reported as, for comparisons."""
    from devlint.running.engine import lint_source

    (diagnostic,) = lint_source(MIXED, "buggy.py")
    return diagnostic.message


def can_run_as_nobody(directory: Path) -> str | None:
    """Why devlint cannot run as an unprivileged user here, or None if it can."""
    if shutil.which("setpriv") is None:
        return "setpriv is not installed"
    probe = subprocess.run(
        [*as_nobody(), sys.executable, "-c", "import devlint.frontends.cli"],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if probe.returncode != 0:
        return f"user {NOBODY} cannot import devlint from this checkout: {probe.stderr[-300:]}"
    return None


def test_a_mode_000_directory_for_real(capsys: pytest.CaptureFixture[str]) -> None:
    """The kernel's own EACCES: as this user, or as ``nobody`` when the tests run as root."""
    as_user = False
    with tempfile.TemporaryDirectory() as name:
        root = Path(name)
        root.chmod(0o755)  # reachable by nobody
        if os.geteuid() == 0:
            as_user = True
            why = can_run_as_nobody(root)
            if why is not None:
                with capsys.disabled():
                    print(f"\nskipped: as root, mode 000 blocks nothing and {why}")
                pytest.skip(f"as root, mode 000 blocks nothing and {why}")
        project(root)
        (root / "locked").chmod(0)
        try:
            walked = devlint("--no-cache", ".", cwd=root, as_user=as_user)
            named = devlint("--no-cache", "locked/sub/x.py", "buggy.py", cwd=root, as_user=as_user)
        finally:
            (root / "locked").chmod(0o755)
    assert walked.returncode == 1, walked.stderr
    assert reported(walked.stdout) == {
        "buggy.py": f"DVL101 {reported_mixed()}",
        "locked": f"DVL002 cannot read directory: {DENIED} (skipped)",
    }
    assert named.returncode == 1, named.stderr
    assert reported(named.stdout) == {
        "buggy.py": f"DVL101 {reported_mixed()}",
        "locked/sub/x.py": f"DVL002 cannot access: {DENIED} (skipped)",
    }


# files that are not regular files ---------------------------------------------


def test_an_explicit_fifo_and_dev_zero_are_notices_never_read(tmp_path: Path) -> None:
    (tmp_path / "buggy.py").write_text(MIXED)
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    result = devlint("--no-cache", "pipe.py", "zero.py", "/dev/zero", "buggy.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert reported(result.stdout) == {
        "/dev/zero": "DVL002 not a regular file: a character device (skipped)",
        "buggy.py": f"DVL101 {reported_mixed()}",
        "pipe.py": "DVL002 not a regular file: a FIFO (named pipe) (skipped)",
        "zero.py": "DVL002 not a regular file: a character device (skipped)",
    }


def test_a_fifo_or_device_link_found_by_the_walk_is_a_notice(tmp_path: Path) -> None:
    (tmp_path / "buggy.py").write_text(MIXED)
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    result = devlint(".", cwd=tmp_path)  # with the cache: it reads files too
    assert result.returncode == 1, result.stderr
    assert reported(result.stdout) == {
        "buggy.py": f"DVL101 {reported_mixed()}",
        "pipe.py": "DVL002 not a regular file: a FIFO (named pipe) (skipped)",
        "zero.py": "DVL002 not a regular file: a character device (skipped)",
    }


def test_a_file_swapped_for_a_fifo_after_the_check_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The type is checked again on the open descriptor: a FIFO put in place between the
    first check and the open is refused, and opening it does not wait for a writer."""
    from devlint.inputs.reading import NotRegularFileError, read_regular_file

    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    real_stat = os.stat
    regular = os.stat_result((stat.S_IFREG | 0o644, *real_stat(tmp_path)[1:]))
    monkeypatch.setattr(os, "stat", lambda path, **kw: regular if path == fifo else real_stat(path))
    outcome: list[BaseException | bytes] = []

    def read() -> None:
        try:
            outcome.append(read_regular_file(fifo))
        except BaseException as error:
            outcome.append(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)
    if reader.is_alive():  # unblock the reader so the thread ends, then fail
        with open(fifo, "wb"):
            pass
        pytest.fail("opening a FIFO blocked")
    (error,) = outcome
    assert isinstance(error, NotRegularFileError)
    assert error.strerror == "not a regular file: a FIFO (named pipe)"
