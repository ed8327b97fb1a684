"""The common semantics of ``.gitignore`` files, so that a directory walk skips what git does.

Supported, as ``gitignore(5)`` describes them: blank lines and ``#`` comments,
trailing spaces (unless escaped), ``\\`` escapes, ``!`` to re-include, a
trailing ``/`` for directories only, a leading or inner ``/`` to anchor a
pattern to the file's directory (otherwise it matches a name at any depth),
``*``, ``?``, ``[...]``, and ``**`` in ``**/x``, ``x/**`` and ``a/**/b``. The
last matching pattern wins, and deeper files come after the ones above them.
As in git, nothing inside an ignored directory can be re-included: the walk
never enters it. Git's global excludes file (``core.excludesFile``) is not read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

GITIGNORE = ".gitignore"


@dataclass(frozen=True)
class IgnoreRule:
    """One pattern of one ignore file; ``base`` is its directory, ending in a separator."""

    base: str
    regex: re.Pattern[str]
    negated: bool
    directory_only: bool


def parse_gitignore(text: str, base: str) -> tuple[IgnoreRule, ...]:
    """The rules of an ignore file whose patterns are relative to the directory ``base``."""
    prefix = os.path.join(base, "")
    rules = []
    for line in text.splitlines():
        rule = _parse_line(line, prefix)
        if rule is not None:
            rules.append(rule)
    return tuple(rules)


def is_ignored(rules: Sequence[IgnoreRule], path: str, is_directory: bool) -> bool:
    """Whether the last of ``rules`` that matches the absolute ``path`` ignores it."""
    for rule in reversed(rules):
        if rule.directory_only and not is_directory:
            continue
        if not path.startswith(rule.base):
            continue
        relative = path[len(rule.base) :].replace(os.sep, "/")
        if rule.regex.fullmatch(relative):
            return not rule.negated
    return False


def _parse_line(line: str, base: str) -> IgnoreRule | None:
    line = _strip_trailing_spaces(line)
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    directory_only = line.endswith("/")
    line = line.rstrip("/")
    anchored = "/" in line
    line = line.lstrip("/")
    if not line:
        return None
    pattern = _translate(line)
    if not anchored:
        pattern = f"(?:.*/)?{pattern}"
    return IgnoreRule(base, re.compile(pattern, re.DOTALL), negated, directory_only)


def _strip_trailing_spaces(line: str) -> str:
    """Trailing spaces go unless escaped with a backslash (``"a\\ "`` keeps one)."""
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        return stripped + " "
    return stripped


def _translate(glob: str) -> str:
    """A gitignore glob as a regular expression over ``/``-separated relative paths."""
    parts = []
    index, end = 0, len(glob)
    while index < end:
        char = glob[index]
        if char == "*":
            stars = len(glob[index:]) - len(glob[index:].lstrip("*"))
            starts_component = index == 0 or glob[index - 1] == "/"
            after = index + stars
            if stars == 2 and starts_component and glob[after : after + 1] == "/":
                parts.append("(?:.*/)?")  # "**/": zero or more directories
                index = after + 1
                continue
            if stars == 2 and starts_component and after == end:
                parts.append(".*")  # "x/**": everything inside
            else:
                parts.append("[^/]*")
            index = after
        elif char == "?":
            parts.append("[^/]")
            index += 1
        elif char == "[":
            translated, index = _bracket(glob, index)
            parts.append(translated)
        elif char == "\\" and index + 1 < end:
            parts.append(re.escape(glob[index + 1]))
            index += 2
        else:
            parts.append(re.escape(char))
            index += 1
    return "".join(parts)


def _bracket(glob: str, start: int) -> tuple[str, int]:
    """``[...]`` at ``start`` as a regex class and the index after it; a lone ``[`` is literal."""
    index = start + 1
    negated = index < len(glob) and glob[index] in "!^"
    if negated:
        index += 1
    members = []
    first = True
    while index < len(glob) and (glob[index] != "]" or first):
        char = glob[index]
        if char == "\\" and index + 1 < len(glob):
            index += 1
            char = glob[index]
        members.append(char if char == "-" else re.escape(char))
        first = False
        index += 1
    if index >= len(glob):
        return re.escape("["), start + 1
    body = "".join(members)
    return (f"[^/{body}]" if negated else f"(?!/)[{body}]"), index + 1
