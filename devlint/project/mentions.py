"""Which names a project's code mentions: whether anything in the project can call a function.

A function's run with unknown arguments takes its receiver for a module someone placed on
a GPU, and its tensor parameters for tensors on a caller's device. That premise rests on a
caller. For a method nothing in the project names (a model's never-called ``test()``
self-check, a dead helper), only the function's own code can say that it expects a device.
So the analysis asks whether a name is mentioned anywhere in the project's code (comments
and strings left out) other than where a function of that name is defined.

The scan is lexical and errs towards "mentioned": any identifier of that name counts
(an attribute, a variable, another function's call), so only a name that appears nowhere
else is taken as unmentioned. A project too large to scan at once is not scanned: every
name is then unknown, as without a project.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from devlint.inputs.reading import content_digest, read_regular_file

MAX_FILES = 20_000
"""Python files of a project scanned at most; past it, the project is not scanned."""
MAX_BYTES = 200_000_000
"""Bytes of Python scanned at most; past it, the project is not scanned."""

_SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "site-packages"})

_TOKENS = re.compile(
    r"""\#[^\n]*"""  # a comment
    r"""|[rRbBuUfF]{0,2}(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')"""
    r"""|\bdef\s+[A-Za-z_]\w*"""  # a definition: not a mention of its name
    r"""|([A-Za-z_]\w*)"""
)

_EXPORTS = re.compile(r"^__all__\s*\+?=\s*[\[(]([^\])]*)", re.MULTILINE)
"""A module's ``__all__``: the names it exports are called by code outside the project."""
_QUOTED = re.compile(r"""["']([A-Za-z_]\w*)["']""")


@dataclass(eq=False)
class _Scanned:
    """What one file was read as: its stamp on disk, digest and identifier counts."""

    stamp: tuple[int, int]
    digest: str
    counts: Counter[str]


@dataclass(eq=False)
class ProjectMentions:
    """How often each identifier occurs in the code of a project's ``.py`` files. After
    ``forget`` (an editor's next lint) only the files whose stamp changed are read again."""

    root: Path
    _files: dict[Path, _Scanned] = field(default_factory=dict, repr=False)
    _counts: Counter[str] = field(default_factory=Counter, repr=False)
    _current: bool = False
    _too_large: bool = False

    def mentioned(self, name: str) -> bool | None:
        """Whether code of the project mentions ``name`` outside a ``def`` of it; None when
        the project could not be scanned."""
        self._scan()
        return None if self._too_large else self._counts[name] > 0

    def mentioning(self, name: str) -> list[Path] | None:
        """The files whose code mentions ``name`` outside a ``def`` of it; None when the
        project could not be scanned."""
        self._scan()
        if self._too_large:
            return None
        return [path for path, scanned in self._files.items() if scanned.counts[name] > 0]

    def mentioning_all(self, names: tuple[str, ...]) -> list[Path] | None:
        """The files whose code mentions every one of ``names``; None when the project could
        not be scanned."""
        self._scan()
        if self._too_large:
            return None
        return [
            path
            for path, scanned in self._files.items()
            if all(scanned.counts[name] > 0 for name in names)
        ]

    def files(self) -> list[tuple[Path, str]]:
        """The files scanned, with the digests of what was read: an answer rests on all."""
        self._scan()
        return [(path, scanned.digest) for path, scanned in self._files.items()]

    def forget(self) -> None:
        """Look at the files again at the next question (they may have changed)."""
        self._current = False

    def _scan(self) -> None:
        if self._current:
            return
        self._current, self._too_large = True, False
        seen: set[Path] = set()
        total = 0
        for path in _python_files(self.root):
            try:
                status = os.stat(path)
            except OSError:
                continue
            seen.add(path)
            total += status.st_size
            if len(seen) > MAX_FILES or total > MAX_BYTES:
                self._too_large = True
                self._files, self._counts = {}, Counter()
                return
            stamp = (status.st_mtime_ns, status.st_size)
            old = self._files.get(path)
            if old is None or old.stamp != stamp:
                self._read(path, stamp, old)
        for gone in set(self._files) - seen:
            self._counts.subtract(self._files.pop(gone).counts)

    def _read(self, path: Path, stamp: tuple[int, int], old: _Scanned | None) -> None:
        if old is not None:
            self._counts.subtract(self._files.pop(path).counts)
        try:
            data = read_regular_file(path)
        except (OSError, ValueError):
            return
        text = data.decode("utf-8", errors="replace")
        counts = Counter(match for match in _TOKENS.findall(text) if match)
        for listed in _EXPORTS.findall(text):
            counts.update(_QUOTED.findall(listed))
        self._files[path] = _Scanned(stamp, content_digest(data), counts)
        self._counts.update(counts)


def _python_files(root: Path):
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(
            name
            for name in subfolders
            if not name.startswith(".")
            and name not in _SKIPPED_FOLDERS
            and not os.path.exists(os.path.join(folder, name, "pyvenv.cfg"))
        )
        for name in sorted(names):
            if name.endswith(".py"):
                yield Path(folder, name)
