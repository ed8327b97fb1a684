"""Which files a run lints: explicit paths always, directories walked for Python files.

Directory symlinks are followed, but every directory and file is visited once
(by real path), so symlink loops end and aliases are not linted twice.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

PYTHON_SUFFIXES = (".py", ".pyi")
SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".tox",
        ".nox",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".devlint_cache",
        ".venv",
        "venv",
    }
)


class MissingPathError(Exception):
    """A path given on the command line does not exist (a usage error)."""


class Entry(NamedTuple):
    """A file to lint, or (with ``skip_reason``) a directory that could not be read."""

    path: Path
    skip_reason: str | None = None


def iter_python_files(paths: Iterable[Path]) -> Iterator[Entry]:
    """Files to lint under ``paths``, in a deterministic order.

    Paths given explicitly are linted whatever their suffix; inside
    directories only ``*.py``/``*.pyi`` are, and VCS, cache and virtualenv
    directories are skipped. Raises ``MissingPathError`` for a path that does
    not exist (a dangling symlink exists: reading it reports the problem).
    """
    paths = list(paths)
    for path in paths:
        if not os.path.lexists(path):
            raise MissingPathError(str(path))
    seen: set[str] = set()
    for path in paths:
        if _is_directory(path):
            yield from _walk(path, seen)
        elif _first_visit(path, seen):
            yield Entry(path)


def _walk(top: Path, seen: set[str]) -> Iterator[Entry]:
    if not _first_visit(top, seen):
        return
    stack = [top]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError as error:
            yield Entry(directory, f"cannot read directory: {error.strerror or error}")
            continue
        subdirectories = []
        for entry in entries:
            path = directory / entry.name
            if _is_directory(path):
                if not _is_skipped_directory(path) and _first_visit(path, seen):
                    subdirectories.append(path)
            elif (
                entry.name.endswith(PYTHON_SUFFIXES)
                and _is_file_or_broken_link(entry)
                and _first_visit(path, seen)
            ):
                yield Entry(path)
        stack.extend(reversed(subdirectories))


def _is_directory(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a symlink loop: neither a file nor a directory
        return False


def _is_skipped_directory(path: Path) -> bool:
    return path.name in SKIPPED_DIRECTORIES or (path / "pyvenv.cfg").exists()


def _is_file_or_broken_link(entry: os.DirEntry[str]) -> bool:
    """Regular files, and symlinks that lead nowhere (reading them reports why)."""
    try:
        if entry.is_file():
            return True
    except OSError:  # a symlink loop
        pass
    return entry.is_symlink() and not os.path.exists(entry.path)


def _first_visit(path: Path, seen: set[str]) -> bool:
    real = os.path.realpath(path)
    if real in seen:
        return False
    seen.add(real)
    return True
