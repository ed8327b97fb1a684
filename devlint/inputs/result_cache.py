"""The result cache of ``devlint check``: a file's diagnostics, keyed by what decides them.

A key hashes the file's bytes, the name it is reported under, the settings
and devlint's own code: its version, every ``.py`` and ``.json`` file of the
package (so editing a rule or the torch API table invalidates everything), the
LibCST and Python versions.

Where: always in a folder of devlint's own, ``.devlint_cache``, made inside the
directory given by ``--cache-dir`` or ``$DEVLINT_CACHE_DIR``, else at the
project root (where the ``pyproject.toml`` with ``[tool.devlint]`` is, else
the working directory). The given directory may be a project or a shared
folder such as ``$XDG_CACHE_HOME``: devlint never marks it, and never deletes
anything in it. Only the folder devlint made gets a ``.gitignore`` and a
``CACHEDIR.TAG``; that tag, with devlint's exact text, is also what makes a
folder devlint's. A ``.devlint_cache`` without it is someone else's, and the
run goes without a cache. Entries live in one subfolder per code version; a new
code version removes the subfolders of older ones, but only inside a folder
bearing the tag, and only subfolders holding nothing but what devlint writes.

Entries are small JSON files written atomically (a temporary file in the same
folder, renamed over the entry), so concurrent runs never see half an entry.
JSON and not pickle: a cache folder that arrives with a checkout must not be
able to run code (the parsed trees kept beside the entries, ``devlint.inputs.tree_cache``,
are pickles read with LibCST's node classes only). A cache folder that cannot be
written is simply not used.

What an entry is trusted with. Whoever can write the cache folder can plant
files in it, so an entry is signed with a secret of the user's that lives
outside the cache (``devlint.inputs.cache_signing``): one whose signature does not verify
is a miss, never decoded. A signed entry is still checked as untrusted input
(a bug in an older devlint must not crash a newer one): one that cannot be
read, is not a regular file, is too large, is not JSON, has a field missing,
extra or of the wrong type, names another key or another file, holds a
diagnostic for another path, with an unknown code, a position outside the
file, or text with control characters (terminal escape sequences), is a miss:
the file is linted again and the entry replaced. A ``.devlint_cache`` that is
not the user's own, that anybody may write, or that is a symbolic link leading
out of the directory it is in, is refused with a warning, as git refuses a
repository owned by someone else.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import hashlib
import json
import os
import pkgutil
import re
import shutil
import stat
import sys
import tempfile
import types
import typing
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

from devlint import __version__
from devlint.config import Settings
from devlint.diagnostic import Diagnostic
from devlint.inputs.cache_signing import cache_secret, sign, verified
from devlint.inputs.decoding import lines_of_data
from devlint.inputs.reading import content_digest, read_regular_file
from devlint.notices import INTERNAL_ERROR, NOTICE_SUMMARIES

CACHE_DIR_NAME = ".devlint_cache"
CACHE_DIR_ENV = "DEVLINT_CACHE_DIR"
_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n# devlint's cache: https://bford.info/cachedir/\n"
)
_GITIGNORE = "# Created by devlint\n*\n"
_VERSION_FOLDER = re.compile(r"[0-9a-f]{16}")
_SHARD = re.compile(r"[0-9a-f]{2}")
_ENTRY = re.compile(r"[0-9a-f]{62}|\.tmp-\w+")  # an entry, or put()'s temporary file
_MAX_ENTRY_BYTES = 16 * 1024 * 1024
"""Far above any real entry; a larger file is a miss, not read into memory."""
_PACKAGE = Path(__file__).resolve().parents[1]
"""devlint's own folder (this module is ``devlint/inputs/result_cache.py``)."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_IN_CODE = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")  # tab, LF, FF, CR allowed


@dataclasses.dataclass(frozen=True)
class Linted:
    """One file's diagnostics, and the other files of its project they rest on: each as
    (path, ``content_digest`` of the bytes the analysis read)."""

    diagnostics: list[Diagnostic]
    uses: tuple[tuple[str, str], ...] = ()


LintFile = Callable[[Path, Settings], Linted]


def default_cache_dir(settings: Settings) -> Path:
    """Where devlint makes its cache folder: ``$DEVLINT_CACHE_DIR``, else the project root."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured)
    return Path(settings.root or os.getcwd())


class UnsafeCacheError(Exception):
    """A cache folder others could have written; the message says why it is not used."""


@dataclasses.dataclass(frozen=True)
class ResultCache:
    """Diagnostics of files already linted with this code and these settings.

    Picklable, so worker processes store what they lint themselves.
    """

    folder: Path
    salt: bytes
    secret: bytes = dataclasses.field(repr=False)

    @classmethod
    def open(cls, directory: Path, settings: Settings) -> ResultCache | None:
        """The cache in ``directory/.devlint_cache`` for this code version, or None if it
        cannot be used (not writable, a ``.devlint_cache`` that devlint did not make, no
        secret to sign entries with); ``UnsafeCacheError`` for a folder others control."""
        root = directory / CACHE_DIR_NAME
        code = code_fingerprint()
        folder = root / code[:16]
        secret = cache_secret()
        if secret is None:
            return None
        try:
            _check_safe(root, directory)
            if not _is_devlint_cache(root) and not _create(root):
                return None
            if not folder.is_dir():
                _prune(root)
                folder.mkdir(exist_ok=True)
        except OSError:
            return None
        salt = hashlib.blake2b(f"{code}\0{settings!r}\0".encode(), digest_size=32).digest()
        return cls(folder, salt, secret)

    def key(self, data: bytes, name: str) -> str:
        """The key of a file with these bytes, reported as ``name``."""
        digest = hashlib.blake2b(self.salt, digest_size=32)
        digest.update(name.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
        digest.update(data)
        return digest.hexdigest()

    def get(self, data: bytes, name: str) -> list[Diagnostic] | None:
        """The stored diagnostics of a file with these bytes, reported as ``name``; None when
        there is no entry, it does not hold up (see the module's docstring), or a file of
        the project it rests on changed since."""
        key = self.key(data, name)
        try:
            signed = read_small_file(self._entry(key), _MAX_ENTRY_BYTES)
            text = verified(self.secret, signed)
            if text is None:
                return None  # not written by this user's devlint
            entry = json.loads(text.decode("utf-8"))
            diagnostics = _diagnostics_of(entry, key, name, data)
            uses = _decode(entry["uses"], tuple[tuple[str, ...], ...])
        except (OSError, ValueError, RecursionError):  # RecursionError: absurdly nested JSON
            return None
        return diagnostics if all(_still(use) for use in uses) else None

    def put(
        self,
        data: bytes,
        name: str,
        diagnostics: Iterable[Diagnostic],
        uses: Iterable[tuple[str, str]] = (),
    ) -> None:
        """Store the diagnostics and the files they rest on; a failure to write is ignored
        (the cache is an optimisation)."""
        key = self.key(data, name)
        entry = {
            "key": key,
            "path": name,
            "diagnostics": _encode(list(diagnostics)),
            "uses": [list(use) for use in uses],
        }
        with contextlib.suppress(OSError):
            self._entry(key).parent.mkdir(exist_ok=True)
            text = json.dumps(entry, separators=(",", ":")).encode()
            write_atomically(self._entry(key), sign(self.secret, text) + text)

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
            diagnostics = self.get(data, str(path))
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
        return lint(path, settings).diagnostics  # which reports why
    diagnostics = results.get(data, str(path))
    if diagnostics is None:
        linted = lint(path, settings)
        diagnostics = linted.diagnostics
        if not any(d.code == INTERNAL_ERROR for d in diagnostics) and _unchanged(path, data):
            results.put(data, str(path), diagnostics, linted.uses)
    return diagnostics


_DIGESTS: dict[tuple[str, int, int, int], str] = {}
"""Digests of used files by (path, inode, size, mtime): each read once per process."""


def _still(use: tuple[str, ...]) -> bool:
    """Whether a file a stored result rests on still has the content it had then."""
    if len(use) != 2:
        return False
    path, digest = use
    try:
        status = os.stat(path)
        stamp = (path, status.st_ino, status.st_size, status.st_mtime_ns)
        if stamp not in _DIGESTS:
            _DIGESTS[stamp] = content_digest(read_regular_file(Path(path)))
    except (OSError, ValueError):  # ValueError: a path with a NUL byte
        return False
    return _DIGESTS[stamp] == digest


def _unchanged(path: Path, data: bytes) -> bool:
    try:
        return read_regular_file(path) == data
    except OSError:
        return False


@cache
def code_fingerprint() -> str:
    """A hash of everything in devlint that decides a result, and of what it runs on."""
    package = _PACKAGE
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


# the cache folder: devlint's own, recognised by its tag ---------------------


def _check_safe(root: Path, directory: Path) -> None:
    """``UnsafeCacheError`` unless ``root`` is the user's own, written by nobody else, and
    in ``directory`` for real (a symbolic link may not lead elsewhere); nothing to check
    when it does not exist yet."""
    try:
        status = os.stat(root)
    except FileNotFoundError:
        return
    if os.path.islink(root):
        real, place = os.path.realpath(root), os.path.realpath(directory)
        if os.path.commonpath([real, place]) != place:
            raise UnsafeCacheError(f"{root} is a symbolic link to {real}, outside {place}")
    if status.st_uid != _user_id():
        raise UnsafeCacheError(f"{root} belongs to another user (uid {status.st_uid})")
    if status.st_mode & stat.S_IWOTH:
        raise UnsafeCacheError(
            f"{root} may be written by anybody (mode {stat.S_IMODE(status.st_mode):o})"
        )


def _user_id() -> int:
    return os.geteuid()


def _is_devlint_cache(root: Path) -> bool:
    """Whether ``root`` is a folder devlint made: it holds devlint's ``CACHEDIR.TAG``."""
    try:
        return root.is_dir() and read_small_file(root / "CACHEDIR.TAG", len(_TAG)) == _TAG.encode()
    except (OSError, ValueError):
        return False


def _create(root: Path) -> bool:
    """Make and mark the cache folder; False when a folder of that name already holds
    something (not devlint's, or another run's still being marked: this run goes without)."""
    root.mkdir(mode=0o755, parents=True, exist_ok=True)
    if any(root.iterdir()):
        return False
    write_atomically(root / ".gitignore", _GITIGNORE)  # out of git, as ruff and pytest do
    write_atomically(root / "CACHEDIR.TAG", _TAG)  # out of backups; written last: the mark
    return True


def _prune(root: Path) -> None:
    """Remove the folders of other code versions (best effort: another run may be using one)."""
    for child in root.iterdir():
        if _VERSION_FOLDER.fullmatch(child.name) and _holds_only_entries(child):
            shutil.rmtree(child, ignore_errors=True)


def _holds_only_entries(folder: Path) -> bool:
    """Whether ``folder`` holds nothing but what ``ResultCache.put`` writes there."""
    try:
        return _is_plain_folder(folder) and all(
            _SHARD.fullmatch(shard.name)
            and _is_plain_folder(shard)
            and all(
                _ENTRY.fullmatch(entry.name) and entry.is_file() and not entry.is_symlink()
                for entry in shard.iterdir()
            )
            for shard in folder.iterdir()
        )
    except OSError:
        return False


def _is_plain_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def write_atomically(path: Path, content: str | bytes) -> None:
    """Write a temporary file beside ``path`` and rename it over ``path``: readers see the old
    file or the new one, never half of one."""
    data = content.encode() if isinstance(content, str) else content
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def read_small_file(path: Path, limit: int) -> bytes:
    """The bytes of a regular file (a FIFO or ``/dev/zero`` is never read) of at most
    ``limit`` bytes; ValueError for a larger one."""
    if path.stat().st_size > limit:
        raise ValueError(f"{path}: over {limit:,} bytes")
    return read_regular_file(path)


# entries: typed JSON, checked against the file they are for ----------------


def _encode(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [_encode(item) for item in value]
    return value


def _diagnostics_of(entry: object, key: str, name: str, data: bytes) -> list[Diagnostic]:
    """The diagnostics of an entry for the file ``name`` with bytes ``data`` stored under
    ``key``; ValueError unless every field has its type and the entry fits that file."""
    if not isinstance(entry, dict) or entry.keys() != {"key", "path", "diagnostics", "uses"}:
        raise ValueError("not an entry")
    if entry["key"] != key or entry["path"] != name:
        raise ValueError("an entry for another file")
    diagnostics = _decode(entry["diagnostics"], tuple[Diagnostic, ...])
    if diagnostics:  # most files have none: nothing to decode
        lines = lines_of_data(data, name) or {None: [""]}  # undecodable: a notice at 1:1
        for diagnostic in diagnostics:
            _check_fits(diagnostic, name, lines.get(diagnostic.cell, []))
    return list(diagnostics)


def _decode(value: object, kind: typing.Any) -> typing.Any:
    """Parsed JSON as ``kind`` (a field's type), checked all the way down."""
    origin = typing.get_origin(kind)
    if kind in (int, str, bool):
        if type(value) is not kind:  # exactly: True is no line number
            raise ValueError(f"{value!r} is not a {kind.__name__}")
        return value
    if kind is type(None):
        if value is not None:
            raise ValueError(f"{value!r} is not null")
        return value
    if origin is tuple:
        if not isinstance(value, list):
            raise ValueError(f"{value!r} is not a list")
        return tuple(_decode(item, typing.get_args(kind)[0]) for item in value)
    if origin in (typing.Union, types.UnionType):  # X | None
        problems = []
        for option in typing.get_args(kind):
            try:
                return _decode(value, option)
            except ValueError as problem:
                problems.append(str(problem))
        raise ValueError("; ".join(problems))
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        if not isinstance(value, str):
            raise ValueError(f"{value!r} is not a {kind.__name__}")
        return kind(value)
    if dataclasses.is_dataclass(kind):
        fields = _field_types(kind)
        if not isinstance(value, dict) or value.keys() != fields.keys():
            raise ValueError(f"{value!r} does not have the fields of {kind.__name__}")
        return kind(**{name: _decode(value[name], fields[name]) for name in fields})
    raise ValueError(f"no entry holds a {kind!r}")


@cache
def _field_types(kind: type) -> dict[str, typing.Any]:
    hints = typing.get_type_hints(kind)
    return {field.name: hints[field.name] for field in dataclasses.fields(kind)}


def _check_fits(diagnostic: Diagnostic, name: str, lines: list[str]) -> None:
    """ValueError unless devlint could have reported ``diagnostic`` on this file."""
    if diagnostic.path != name:
        raise ValueError(f"a diagnostic for {diagnostic.path!r} in the entry of {name!r}")
    if diagnostic.code not in _known_codes():
        raise ValueError(f"unknown code {diagnostic.code!r}")
    if _CONTROL.search(diagnostic.message):
        raise ValueError("control characters in a message")
    spans = [(diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column)]
    if diagnostic.fix is not None:
        if _CONTROL.search(diagnostic.fix.title):
            raise ValueError("control characters in a fix's title")
        for edit in diagnostic.fix.edits:
            if _CONTROL_IN_CODE.search(edit.text):
                raise ValueError("control characters in a fix's text")
            spans.append((edit.line, edit.column, edit.end_line, edit.end_column))
    for line, column, end_line, end_column in spans:
        if not (
            1 <= line <= end_line <= len(lines)
            and 0 <= column <= len(lines[line - 1])
            and 0 <= end_column <= len(lines[end_line - 1])
            and (line, column) <= (end_line, end_column)
        ):
            raise ValueError(f"{line}:{column}-{end_line}:{end_column} is not in the file")


@cache
def _known_codes() -> frozenset[str]:
    """Every notice and rule code; rule codes from the rules' module names (``dvl101_….py``),
    so that reading the cache imports no rule."""
    rules = _PACKAGE / "rules"
    names = (module.name for module in pkgutil.iter_modules([str(rules)]))
    codes = {match.group().upper() for name in names if (match := re.match(r"dvl\d+", name))}
    return frozenset(NOTICE_SUMMARIES) | codes
