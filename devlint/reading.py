"""Read a file's bytes only when it is a regular file.

A path a user names may be a FIFO (reading blocks until a writer comes, maybe
never), a device (``/dev/zero`` never ends) or a socket. Such a file is never
opened: its type is checked first (after following links), then the file is
opened without blocking and checked again on the open descriptor, so a file
swapped for a FIFO in between is not read either.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # opening a FIFO returns at once instead of waiting
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotRegularFileError(OSError):
    """The path is not a regular file; ``strerror`` says what it is."""


def file_kind(mode: int) -> str | None:
    """What a file of this ``st_mode`` is, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for is_kind, name in _KINDS if is_kind(mode)), "not a regular file")


def read_regular_file(path: Path | str) -> bytes:
    """The bytes of ``path``; raises ``OSError`` if it cannot be read or is not a regular file."""
    _check_regular(path, os.stat(path).st_mode)
    descriptor = os.open(path, _OPEN_FLAGS)
    with open(descriptor, "rb", closefd=True) as stream:
        _check_regular(path, os.fstat(descriptor).st_mode)  # replaced since the stat?
        return stream.read()


def _check_regular(path: Path | str, mode: int) -> None:
    kind = file_kind(mode)
    if kind is not None:
        raise NotRegularFileError(errno.EINVAL, f"not a regular file: {kind}", str(path))


def content_digest(data: bytes) -> str:
    """A short hash of a file's bytes: how the result cache tells whether a file that a
    result rests on (an imported module) is still what the analysis read."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()
