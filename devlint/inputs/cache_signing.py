"""The user's secret that signs what devlint keeps between runs.

Whoever can write a cache folder could plant entries: results that hide findings, or
pickled trees built to make a run slow or huge. So every entry carries a keyed hash
(``sign``) made with a secret that lives outside the cache, readable by its owner only;
an entry whose hash does not verify is a miss, and is never decoded or unpickled.

The secret is ``$DEVLINT_CACHE_KEY`` when set (CI: a secret of the repository, so that
a cache restored from another job is used, and one restored from a job that could not
read the secret is not), else 32 random bytes kept in
``$XDG_STATE_HOME/devlint/cache-key`` (``~/.local/state/devlint/cache-key``), made on
first use with mode 0600. A key file that is not a regular file of the user's own, or
that others may read or write, is refused: the run goes without a cache, as it does when
no key can be made (a read-only home).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import stat
import tempfile
from functools import cache
from pathlib import Path

KEY_ENV = "DEVLINT_CACHE_KEY"
KEY_BYTES = 32
SIGNATURE_BYTES = 32


@cache
def cache_secret() -> bytes | None:
    """The secret of this user (read once per process), or None when there is none to use."""
    configured = os.environ.get(KEY_ENV)
    if configured:
        return hashlib.blake2b(configured.encode("utf-8", "surrogateescape")).digest()[:KEY_BYTES]
    try:
        return _read_or_make(key_path())
    except (OSError, ValueError):
        return None


def key_path() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(state) / "devlint" / "cache-key"


def sign(secret: bytes, data: bytes) -> bytes:
    """The keyed hash of ``data``."""
    return hashlib.blake2b(data, key=secret, digest_size=SIGNATURE_BYTES).digest()


def verified(secret: bytes, signed: bytes) -> bytes | None:
    """The data of ``signed`` (a signature, then the data) when the signature is right."""
    signature, data = signed[:SIGNATURE_BYTES], signed[SIGNATURE_BYTES:]
    return data if hmac.compare_digest(signature, sign(secret, data)) else None


def _read_or_make(path: Path) -> bytes:
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".cache-key-")
    try:
        with os.fdopen(descriptor, "wb") as stream:  # mkstemp: mode 0600
            stream.write(os.urandom(KEY_BYTES))
            stream.flush()
            os.fsync(stream.fileno())
        with contextlib.suppress(FileExistsError):  # another run made it first: theirs wins
            os.link(temporary, path)
    finally:
        os.unlink(temporary)
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    """The key in ``path``; ValueError when the file is not one the user alone controls."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(descriptor, "rb") as stream:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode) or status.st_uid != os.geteuid():
            raise ValueError(f"{path} is not a file of this user's")
        if status.st_mode & 0o077:
            raise ValueError(f"{path} may be read or written by others")
        key = stream.read(KEY_BYTES + 1)
    if len(key) != KEY_BYTES:
        raise ValueError(f"{path} does not hold a key")
    return key
