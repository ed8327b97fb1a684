"""What a directory walk leaves out: ``exclude`` patterns and ``.gitignore`` files.

A pattern without a ``/`` is a glob matched against the name of each file and
directory (``build``, ``*_pb2.py``); one with a ``/`` is a glob matched against
the whole path, relative to the directory it was configured in (see
``anchor_patterns``). As in ``fnmatch``, ``*`` also matches ``/`` there.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from devlint.inputs.reading import read_regular_file
from devlint.project.gitignore import GITIGNORE, IgnoreRule, is_ignored, parse_gitignore

DEFAULT_EXCLUDE = (
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
    ".ipynb_checkpoints",  # Jupyter's autosaved copies of the notebooks beside them
    ".devlint_cache",
    ".venv",
    "venv",
)
"""Skipped unless ``exclude`` replaces them (``extend-exclude`` adds to them)."""


def anchor_patterns(patterns: Iterable[str], root: str) -> tuple[str, ...]:
    """Patterns with a ``/`` made absolute under ``root``; name patterns stay as they are.

    ``./`` and a trailing ``/`` are dropped: ``./build/`` means ``build`` relative to ``root``.
    """
    anchored = []
    for pattern in patterns:
        pattern = pattern.removeprefix("./").rstrip("/") or pattern
        if "/" in pattern and not os.path.isabs(pattern):
            pattern = f"{glob.escape(os.path.abspath(root))}/{pattern}"
        anchored.append(pattern)
    return tuple(anchored)


def _combined(patterns: Iterable[str]) -> re.Pattern[str] | None:
    """One regular expression for many globs: compiled once, matched once per path."""
    translated = [fnmatch.translate(pattern) for pattern in patterns]
    return re.compile("|".join(translated)) if translated else None


@dataclass(frozen=True)
class Exclusions:
    """Patterns (anchored, see ``anchor_patterns``), whether ``.gitignore`` files count, and
    whether paths named on the command line are checked too (``force_exclude``), below
    ``root``."""

    patterns: tuple[str, ...] = DEFAULT_EXCLUDE
    respect_gitignore: bool = True
    force_exclude: bool = False
    root: str = field(default_factory=os.getcwd)
    _names: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _paths: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        paths = [pattern for pattern in self.patterns if "/" in pattern]
        names = [pattern for pattern in self.patterns if "/" not in pattern]
        object.__setattr__(self, "_names", _combined(names))
        object.__setattr__(self, "_paths", _combined(paths))

    def matches(self, absolute: str) -> bool:
        """Whether an exclude pattern matches this absolute path (its name or the whole path)."""
        name = os.path.basename(absolute)
        return bool(
            (self._names is not None and self._names.match(name))
            or (self._paths is not None and self._paths.match(absolute))
        )

    def excludes_named(self, path: str) -> bool:
        """``force_exclude``: whether a path named on the command line, or a directory it is in
        (below the project root), matches an exclude pattern."""
        if not self.force_exclude:
            return False
        absolute = os.path.abspath(path)
        below_root = os.path.join(os.path.abspath(self.root), "")
        if not absolute.startswith(below_root):  # the root itself, or a path outside it
            return absolute != below_root[:-1] and self.matches(absolute)
        while absolute.startswith(below_root):
            if self.matches(absolute):
                return True
            absolute = os.path.dirname(absolute)
        return False

    def inherited_rules(self, top: str) -> tuple[IgnoreRule, ...]:
        """The ignore rules that apply inside ``top`` from above it: ``.git/info/exclude`` and
        the ``.gitignore`` files from the repository root down to ``top``'s parent. Outside a
        repository, none (only the ``.gitignore`` files inside the walk count)."""
        if not self.respect_gitignore:
            return ()
        top = os.path.abspath(top)
        ancestors = [top]
        while not os.path.exists(os.path.join(ancestors[-1], ".git")):
            parent = os.path.dirname(ancestors[-1])
            if parent == ancestors[-1]:
                return ()
            ancestors.append(parent)
        repository = ancestors[-1]
        rules = read_rules(os.path.join(repository, ".git", "info", "exclude"), repository)
        for directory in reversed(ancestors[1:]):
            rules += read_rules(os.path.join(directory, GITIGNORE), directory)
        return rules

    def excludes(self, absolute: str, is_directory: bool, rules: Sequence[IgnoreRule] = ()) -> bool:
        """Whether the walk leaves out this file or directory."""
        return self.matches(absolute) or (
            self.respect_gitignore and is_ignored(rules, absolute, is_directory)
        )


def read_rules(path: str, base: str) -> tuple[IgnoreRule, ...]:
    """The rules of the ignore file ``path``, patterns relative to ``base``; none if unreadable."""
    try:
        data = read_regular_file(path)  # a FIFO named .gitignore must not block the walk
    except OSError:
        return ()
    return parse_gitignore(data.decode("utf-8", errors="replace"), base)
