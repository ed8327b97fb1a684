"""The result cache of ``devlint check``: a file's diagnostics, keyed by what decides them.

A key hashes the file's bytes, the name it is reported under, the settings
and devlint's own code: its version, every ``.py`` and ``.json`` file of the
package (so editing a rule or the torch API table invalidates everything), the
LibCST and Python versions. Entries live in ``.devlint_cache/`` at the project
root (where the ``pyproject.toml`` with ``[tool.devlint]`` is, else the
working directory), in one folder per code version; a new code version
removes the folders of older ones.

Entries are small JSON files written atomically (a temporary file in the same
folder, renamed over the entry), so concurrent runs never see half an entry.
An entry that cannot be read or decoded is a miss, never an error, and a cache
folder that cannot be written is simply not used. JSON and not pickle: a cache
folder that arrives with a checkout must not be able to run code.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

from devlint import __version__
from devlint import diagnostic as diagnostic_module
from devlint.config import Settings
from devlint.diagnostic import Diagnostic
from devlint.notices import INTERNAL_ERROR
from devlint.reading import read_regular_file

CACHE_DIR_NAME = ".devlint_cache"
CACHE_DIR_ENV = "DEVLINT_CACHE_DIR"
_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n# devlint's cache: https://bford.info/cachedir/\n"
)
_VERSION_FOLDER = re.compile(r"[0-9a-f]{16}")

LintFile = Callable[[Path, Settings], list[Diagnostic]]

_TYPES: dict[str, type] = {
    name: value
    for name, value in vars(diagnostic_module).items()
    if isinstance(value, type)
    and value.__module__ == diagnostic_module.__name__
    and (dataclasses.is_dataclass(value) or issubclass(value, enum.Enum))
}
"""What an entry may hold: the dataclasses and enums of ``devlint.diagnostic``, nothing else."""


def default_cache_dir(settings: Settings) -> Path:
    """``$DEVLINT_CACHE_DIR``, else ``.devlint_cache`` at the project root."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured)
    return Path(settings.root or os.getcwd()) / CACHE_DIR_NAME


@dataclasses.dataclass(frozen=True)
class ResultCache:
    """Diagnostics of files already linted with this code and these settings.

    Picklable, so worker processes store what they lint themselves.
    """

    folder: Path
    salt: bytes

    @classmethod
    def open(cls, root: Path, settings: Settings) -> ResultCache | None:
        """The cache under ``root`` for this code version, or None if it cannot be created."""
        code = code_fingerprint()
        folder = root / code[:16]
        try:
            if not folder.is_dir():
                _prune(root)
                folder.mkdir(parents=True, exist_ok=True)
            _mark(root)
        except OSError:
            return None
        salt = hashlib.blake2b(f"{code}\0{settings!r}\0".encode(), digest_size=32).digest()
        return cls(folder, salt)

    def key(self, data: bytes, name: str) -> str:
        """The key of a file with these bytes, reported as ``name``."""
        digest = hashlib.blake2b(self.salt, digest_size=32)
        digest.update(name.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
        digest.update(data)
        return digest.hexdigest()

    def get(self, key: str) -> list[Diagnostic] | None:
        """The stored diagnostics, or None when there is no usable entry."""
        try:
            text = self._entry(key).read_text(encoding="utf-8")
            diagnostics = _decode(json.loads(text))
        except Exception:  # missing, half-deleted, corrupt, written by another schema
            return None
        if not isinstance(diagnostics, tuple) or not all(
            isinstance(d, Diagnostic) for d in diagnostics
        ):
            return None
        return list(diagnostics)

    def put(self, key: str, diagnostics: Iterable[Diagnostic]) -> None:
        """Store the diagnostics; a failure to write is ignored (the cache is an optimisation)."""
        entry = self._entry(key)
        text = json.dumps(_encode(list(diagnostics)), separators=(",", ":"))
        temporary = None
        try:
            entry.parent.mkdir(exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-")
            with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
                stream.write(text)
            os.replace(temporary, entry)  # atomic: readers see the old entry or the new one
        except OSError:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)

    def lookup(self, files: Iterable[Path]) -> tuple[list[Diagnostic], list[Path]]:
        """The cached diagnostics of ``files``, and the files that have no entry."""
        found: list[Diagnostic] = []
        missing: list[Path] = []
        for path in files:
            try:
                data = read_regular_file(path)
            except OSError:
                missing.append(path)  # linting it reports why
                continue
            diagnostics = self.get(self.key(data, str(path)))
            if diagnostics is None:
                missing.append(path)
            else:
                found += diagnostics
        return found, missing

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / key[2:]


def lint_file_cached(
    path: Path, settings: Settings, results: ResultCache, lint: LintFile
) -> list[Diagnostic]:
    """``lint(path, settings)`` through the cache.

    A result is stored only if the file still has the bytes it was keyed by
    (an editor may save while it is linted) and devlint did not fail on it.
    """
    try:
        data = read_regular_file(path)
    except OSError:
        return lint(path, settings)  # which reports why
    key = results.key(data, str(path))
    diagnostics = results.get(key)
    if diagnostics is None:
        diagnostics = lint(path, settings)
        if not any(d.code == INTERNAL_ERROR for d in diagnostics) and _unchanged(path, data):
            results.put(key, diagnostics)
    return diagnostics


def _unchanged(path: Path, data: bytes) -> bool:
    try:
        return read_regular_file(path) == data
    except OSError:
        return False


@cache
def code_fingerprint() -> str:
    """A hash of everything in devlint that decides a result, and of what it runs on."""
    package = Path(__file__).resolve().parent
    digest = hashlib.blake2b(digest_size=32)
    digest.update(f"{__version__}\0{sys.version_info[:2]}\0{_libcst_version()}\0".encode())
    for path in sorted(package.rglob("*")):
        if path.suffix in (".py", ".json") and "__pycache__" not in path.parts:
            digest.update(path.relative_to(package).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _libcst_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("libcst")
    except PackageNotFoundError:
        return "unknown"


def _prune(root: Path) -> None:
    """Remove the folders of other code versions (best effort: another run may be using one).

    Only folders named like devlint's own go, whatever ``--cache-dir`` points at.
    """
    if not root.is_dir():
        return
    for child in root.iterdir():
        if _VERSION_FOLDER.fullmatch(child.name) and child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)


def _mark(root: Path) -> None:
    """Keep the cache out of version control and backups, as ruff and pytest do."""
    for name, text in ((".gitignore", "# Created by devlint\n*\n"), ("CACHEDIR.TAG", _TAG)):
        marker = root / name
        if not marker.exists():
            with contextlib.suppress(OSError):
                marker.write_text(text, encoding="utf-8")


def _encode(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"@": type(value).__name__, **fields}
    if isinstance(value, enum.Enum):
        return {"@": type(value).__name__, "value": value.value}
    if isinstance(value, (list, tuple)):
        return [_encode(item) for item in value]
    return value


def _decode(value: object) -> object:
    """The inverse of ``_encode``; sequences come back as tuples, as the dataclasses hold them."""
    if isinstance(value, list):
        return tuple(_decode(item) for item in value)
    if isinstance(value, dict):
        fields = dict(value)
        kind = _TYPES[fields.pop("@")]
        if issubclass(kind, enum.Enum):
            return kind(fields["value"])
        return kind(**{name: _decode(item) for name, item in fields.items()})
    return value
