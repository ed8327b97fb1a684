"""Which files a run lints: explicit paths always, directories walked for Python files
and notebooks.

Directory symlinks are followed, but every directory and file is visited once
(by real path), so symlink loops end and aliases are not linted twice. What
cannot be searched or is not a regular file becomes an entry with a reason
(a notice), never an error that stops the run.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from devlint.inputs.reading import file_kind
from devlint.notebooks.reading import NOTEBOOK_SUFFIX
from devlint.project.exclusions import Exclusions, read_rules
from devlint.project.gitignore import GITIGNORE

LINTED_SUFFIXES = (".py", ".pyi", NOTEBOOK_SUFFIX)


class MissingPathError(Exception):
    """A path given on the command line does not exist (a usage error)."""


class Entry(NamedTuple):
    """A file to lint, or (with ``skip_reason``) a path that could not be read."""

    path: Path
    skip_reason: str | None = None


def iter_source_files(
    paths: Iterable[Path], exclusions: Exclusions | None = None
) -> Iterator[Entry]:
    """Files to lint under ``paths``, in a deterministic order.

    Paths given explicitly are linted whatever their suffix, and whatever
    ``exclusions`` say unless they force it; inside directories only
    ``*.py``, ``*.pyi`` and ``*.ipynb`` are, minus what ``exclusions`` and virtualenvs (a
    ``pyvenv.cfg``) leave out. Raises ``MissingPathError`` for a path that
    does not exist (a dangling symlink exists: reading it reports the problem).
    """
    exclusions = exclusions or Exclusions()
    paths = list(paths)
    kinds = [_explicit_kind(path) for path in paths]  # every missing path before any output
    seen: set[str] = set()
    for path, kind in zip(paths, kinds, strict=True):
        if exclusions.excludes_named(str(path)):
            continue
        if kind is _DIRECTORY:
            yield from _walk(path, seen, exclusions)
        elif kind is not _FILE:
            yield Entry(path, kind)
        elif _first_visit(path, seen):
            yield Entry(path)


_FILE = "file"
_DIRECTORY = "directory"


def _explicit_kind(path: Path) -> str:
    """``_FILE``, ``_DIRECTORY``, or why the path cannot be linted."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError, ValueError):
        raise MissingPathError(str(path)) from None
    except OSError as error:  # a directory on the way that cannot be searched
        return f"cannot access: {error.strerror or error}"
    try:
        mode = os.stat(path).st_mode
    except OSError:  # a dangling link or a loop: reading it reports the problem
        return _FILE
    if stat.S_ISDIR(mode):
        return _DIRECTORY
    kind = file_kind(mode)
    return _FILE if kind is None else _not_regular(kind)


def _not_regular(kind: str) -> str:
    return f"not a regular file: {kind}"


def _walk(top: Path, seen: set[str], exclusions: Exclusions) -> Iterator[Entry]:
    if not _first_visit(top, seen):
        return
    stack = [(top, os.path.abspath(top), exclusions.inherited_rules(str(top)))]
    while stack:
        directory, absolute, rules = stack.pop()
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError as error:
            yield Entry(directory, f"cannot read directory: {error.strerror or error}")
            continue
        if exclusions.respect_gitignore and any(entry.name == GITIGNORE for entry in entries):
            rules += read_rules(os.path.join(absolute, GITIGNORE), absolute)
        subdirectories = []
        for entry in entries:
            path = directory / entry.name
            entry_absolute = os.path.join(absolute, entry.name)
            is_directory = _is_directory(entry)
            if exclusions.excludes(entry_absolute, is_directory, rules):
                continue
            if is_directory:
                if not _is_virtualenv(path) and _first_visit(path, seen):
                    subdirectories.append((path, entry_absolute, rules))
            elif entry.name.endswith(LINTED_SUFFIXES) and _first_visit(path, seen):
                yield _file_entry(path, entry)
        stack.extend(reversed(subdirectories))


def _is_directory(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # a symlink loop, or a link into a directory that cannot be searched
        return False


def _is_virtualenv(path: Path) -> bool:
    return os.path.exists(path / "pyvenv.cfg")  # False, not an error, if it cannot be checked


def _file_entry(path: Path, entry: os.DirEntry[str]) -> Entry:
    """Regular files and links that lead nowhere (reading them reports why) are linted;
    FIFOs, devices and sockets named like Python files get a reason instead."""
    try:
        if entry.is_file():  # the directory listing says so: no system call for most files
            return Entry(path)
        mode = entry.stat().st_mode
    except OSError:
        return Entry(path)
    kind = file_kind(mode)
    return Entry(path) if kind is None else Entry(path, _not_regular(kind))


def _first_visit(path: Path, seen: set[str]) -> bool:
    real = os.path.realpath(path)
    if real in seen:
        return False
    seen.add(real)
    return True
