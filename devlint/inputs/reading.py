"""Read a file's bytes only when it is a regular file, and not too large to analyse.

A path a user names may be a FIFO (reading blocks until a writer comes, maybe
never), a device (``/dev/zero`` never ends) or a socket. Such a file is never
opened: its type is checked first (after following links), then the file is
opened without blocking and checked again on the open descriptor, so a file
swapped for a FIFO in between is not read either. Its size is checked on the
descriptor too, and no more than the limit is read, so a 20 GB (sparse) file
costs nothing, however it is reached: walked, imported or named by a cache entry.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

from devlint.inputs.limits import max_file_bytes

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


class FileTooLargeError(OSError):
    """The file is larger than devlint analyses; ``strerror`` says how large."""


def file_kind(mode: int) -> str | None:
    """What a file of this ``st_mode`` is, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for is_kind, name in _KINDS if is_kind(mode)), "not a regular file")


def read_regular_file(path: Path | str, limit: int | None = None) -> bytes:
    """The bytes of ``path``; raises ``OSError`` if it cannot be read or is not a regular
    file, ``FileTooLargeError`` if it holds more than ``limit`` bytes (by default, the
    limit for its kind: ``limits.max_file_bytes``)."""
    limit = max_file_bytes(path) if limit is None else limit
    _check_regular(path, os.stat(path).st_mode)
    descriptor = os.open(path, _OPEN_FLAGS)
    with open(descriptor, "rb", closefd=True) as stream:
        status = os.fstat(descriptor)
        _check_regular(path, status.st_mode)  # replaced since the stat?
        _check_size(path, status.st_size, limit)
        data = stream.read(limit + 1)
        _check_size(path, len(data), limit)  # grown since the stat?
        return data


def _check_size(path: Path | str, size: int, limit: int) -> None:
    if size > limit:
        message = f"file too large to analyse: {size:,} bytes, over the limit of {limit:,}"
        if size == limit + 1:  # only the read saw it: it grew past the limit
            message = f"file too large to analyse: over the limit of {limit:,} bytes"
        raise FileTooLargeError(errno.EFBIG, message, str(path))


def _check_regular(path: Path | str, mode: int) -> None:
    kind = file_kind(mode)
    if kind is not None:
        raise NotRegularFileError(errno.EINVAL, f"not a regular file: {kind}", str(path))


def content_digest(data: bytes) -> str:
    """A short hash of a file's bytes: how the result cache tells whether a file that a
    result rests on (an imported module) is still what the analysis read."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()
