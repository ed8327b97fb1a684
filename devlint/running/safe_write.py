"""How ``devlint check --fix`` rewrites a file without altering what is not devlint's.

A fix changes a file's content and nothing else: not a read-only file, not a
file outside the paths the user gave (reached through a symbolic link), not
the other names of a hard-linked file, not its mode or owner. A file the
policy refuses raises ``NotRewritten``; the caller reports it as a notice.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

OUTSIDE_ROOTS_FLAG = "--fix-outside-roots"


class NotRewritten(Exception):
    """The policy forbids writing this file; the message says why (and what would allow it)."""


@dataclass(frozen=True)
class WritePolicy:
    """Where ``--fix`` may write: real paths below ``roots``, unless ``outside_roots``.

    ``roots`` are real (symlink-free) paths: the directories given on the
    command line, and the directory of each file given.
    """

    roots: tuple[str, ...]
    outside_roots: bool = False

    @classmethod
    def for_paths(cls, paths: Iterable[Path], *, outside_roots: bool = False) -> WritePolicy:
        """The policy for a run over ``paths``. A file named there counts by its directory:
        a symbolic link named on the command line that leads elsewhere is outside too."""
        directories = (
            path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
            for path in paths
        )
        return cls(tuple(os.path.realpath(directory) for directory in directories), outside_roots)

    def is_inside(self, real: str) -> bool:
        return any(os.path.commonpath([root, real]) == root for root in self.roots)


def rewrite(path: Path, data: bytes, policy: WritePolicy) -> None:
    """Make ``data`` the content of the file at ``path``, keeping its mode, owner and names.

    Raises ``NotRewritten`` when the policy refuses, ``OSError`` when writing
    fails (a full disk, a file-size limit); either way the file is as it was and
    no temporary file is left. A file with one link is replaced atomically
    (temporary file + rename) with its mode and owner; a hard-linked one
    (allowed by ``outside_roots``) and one whose owner cannot be given to a new
    file are written in place, and put back as they were if the write fails.
    """
    real = os.path.realpath(path)
    before = os.stat(real)
    if not before.st_mode & stat.S_IWUSR or not os.access(real, os.W_OK):
        raise NotRewritten("the file is read-only")
    if not policy.outside_roots and not policy.is_inside(real):
        raise NotRewritten(
            f"its real path {real} is outside the paths given (it is reached through a symbolic"
            f" link); pass {OUTSIDE_ROOTS_FLAG} to write it"
        )
    if before.st_nlink > 1 and not policy.outside_roots:
        raise NotRewritten(
            f"the file has {before.st_nlink} hard links, which may lie outside the paths given;"
            f" pass {OUTSIDE_ROOTS_FLAG} to edit it in place (every link sees the fix)"
        )
    if before.st_nlink > 1 or not _replace(real, data, before):
        _write_in_place(real, data)


def _replace(real: str, data: bytes, before: os.stat_result) -> bool:
    """Replace the file by a new one with its mode and owner, atomically: a reader sees the
    old content or the new, never a mix. False (nothing changed) when the owner cannot be
    given to the new file (not root, another user's file)."""
    handle, temporary = tempfile.mkstemp(
        prefix=f".{os.path.basename(real)}.", dir=os.path.dirname(real)
    )
    renamed = False
    try:
        with os.fdopen(handle, "wb") as stream:
            if not _give_owner(stream.fileno(), before):
                return False
            # the mode after the owner: changing the owner clears set-user-ID bits
            os.fchmod(stream.fileno(), stat.S_IMODE(before.st_mode))
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, real)
        renamed = True
    finally:
        if not renamed:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    return True


def _give_owner(descriptor: int, before: os.stat_result) -> bool:
    now = os.fstat(descriptor)
    if (now.st_uid, now.st_gid) == (before.st_uid, before.st_gid):
        return True
    try:
        os.fchown(descriptor, before.st_uid, before.st_gid)
    except OSError:  # not root (EPERM), an owner unmapped in this user namespace (EINVAL)
        return False
    return True


def _write_in_place(real: str, data: bytes) -> None:
    """Overwrite the file's content through its own inode: links, mode and owner stay.

    Not atomic (used only where a new inode would lose one of those), but never
    left half-written: a longer file first grows by its new tail, so a full disk
    or a file-size limit fails before any old byte is overwritten, and a write
    that still fails midway puts the old bytes back. Only then is it cut to size.
    """
    descriptor = os.open(real, os.O_RDWR | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    try:
        old = _read_all(descriptor)
        try:
            if len(data) > len(old):
                _write_at(descriptor, data[len(old) :], len(old))  # the room it needs, first
            _write_at(descriptor, data[: len(old)], 0)
            os.ftruncate(descriptor, len(data))
            os.fsync(descriptor)
        except OSError:
            _put_back(descriptor, old)
            raise
        if os.fstat(descriptor).st_size != len(data):
            _put_back(descriptor, old)
            raise OSError(errno.EIO, "the file did not take the new content")
    finally:
        os.close(descriptor)


def _read_all(descriptor: int) -> bytes:
    size = os.fstat(descriptor).st_size
    chunks, offset = [], 0
    while chunk := os.pread(descriptor, max(size - offset, 1 << 16), offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _write_at(descriptor: int, data: bytes, offset: int) -> None:
    """All of ``data`` at ``offset``, or ``OSError``: ``os.pwrite`` may write part of it."""
    view = memoryview(data)
    while view:
        written = os.pwrite(descriptor, view, offset)
        view, offset = view[written:], offset + written


def _put_back(descriptor: int, old: bytes) -> None:
    """The file's old content again, after a failed write (best effort: the old bytes fit in
    the room the file had, so this asks the disk for nothing new)."""
    for step in (
        lambda: _write_at(descriptor, old, 0),  # what failed was not overwritten anyway
        lambda: os.ftruncate(descriptor, len(old)),
        lambda: os.fsync(descriptor),
    ):
        with contextlib.suppress(OSError):
            step()
