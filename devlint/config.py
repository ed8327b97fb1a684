"""Settings: which codes run, per-file ignores, extra device-variable names.

They come from ``[tool.devlint]`` in the nearest ``pyproject.toml`` that has
one, so that the CLI, pre-commit and the editor agree on a project's setup.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devlint.codes import empty_selection, unknown_code
from devlint.inputs.reading import read_regular_file
from devlint.project.exclusions import anchor_patterns

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 reads pyproject.toml only with tomli installed
    try:
        import tomli as tomllib
    except ImportError:
        tomllib = None


@dataclass(frozen=True)
class Settings:
    """What a run checks. Codes are prefixes: ``DVL1`` selects DVL101, DVL102…

    ``select`` None means the default set (every rule enabled by default).
    ``extend_ignore`` adds to ``ignore`` as ``extend_select`` adds to ``select``:
    ``--ignore`` replaces the configured ``ignore`` only.
    ``device_names`` are extra variable names that hold a device (``"dev"``).
    ``root`` is the directory that ``per_file_ignores`` globs are relative to.
    ``exclude`` (None: devlint's default list) and ``extend_exclude`` are
    anchored patterns (``devlint.project.exclusions.anchor_patterns``) that the
    directory walk leaves out, with what ``.gitignore`` files ignore unless
    ``respect_gitignore`` is false; ``force_exclude`` applies them to paths
    named on the command line too.
    """

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    device_names: tuple[str, ...] = ()
    # Not in the repr, which keys the result cache: which files a run walks changes no result.
    exclude: tuple[str, ...] | None = field(default=None, repr=False)
    extend_exclude: tuple[str, ...] = field(default=(), repr=False)
    respect_gitignore: bool = field(default=True, repr=False)
    force_exclude: bool = field(default=False, repr=False)
    root: str | None = field(default=None, compare=False)


DEFAULT_SETTINGS = Settings()

_CODE_KEYS = ("select", "extend-select", "ignore", "extend-ignore")
_PATTERN_KEYS = ("exclude", "extend-exclude")
_SWITCH_KEYS = ("respect-gitignore", "force-exclude")
_KEYS = (*_CODE_KEYS, "per-file-ignores", "device-names", *_PATTERN_KEYS, *_SWITCH_KEYS)
MAX_PATTERNS = 1_000
"""Patterns in ``per-file-ignores`` or an exclude list: thousands are generated, not written,
and every file is matched against each of them."""
MAX_PATTERN_LENGTH = 1_000


class ConfigError(Exception):
    """A configuration the user must fix; the message names the file and the key."""


def load_settings(start: Path) -> Settings:
    """Settings of the nearest ``pyproject.toml`` at or above ``start`` with ``[tool.devlint]``.

    ``start`` is a file or directory. Without such a file the defaults apply.
    """
    directory = Path(os.path.abspath(start))  # not resolve(): that raises on symlink loops
    if not os.path.isdir(directory):  # os.path: False, not an error, where it cannot look
        directory = directory.parent
    for candidate in (directory, *directory.parents):
        pyproject = candidate / "pyproject.toml"
        if os.path.isfile(pyproject):
            table = _devlint_table(pyproject)
            if table is not None:
                return settings_from_table(table, pyproject)
    return DEFAULT_SETTINGS


def load_settings_file(pyproject: Path) -> Settings:
    """Settings of this ``pyproject.toml`` (``--config``), or of the ``pyproject.toml`` in
    this directory; defaults if it has no ``[tool.devlint]`` table."""
    if os.path.isdir(pyproject):
        if not os.path.lexists(pyproject / "pyproject.toml"):
            raise ConfigError(f"{pyproject}: a directory without a pyproject.toml")
        pyproject = pyproject / "pyproject.toml"
    elif not os.path.lexists(pyproject):
        raise ConfigError(f"{pyproject}: no such file")
    table = _devlint_table(pyproject)
    return settings_from_table(table or {}, pyproject)


def _devlint_table(pyproject: Path) -> dict[str, Any] | None:
    try:
        text = read_regular_file(pyproject).decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{pyproject}: cannot read: {error}") from None
    if "devlint" not in text:  # most projects: no need to parse at all
        return None
    if tomllib is None:
        raise ConfigError(f"{pyproject}: reading it needs Python 3.11+ or the tomli package")
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{pyproject}: invalid TOML: {error}") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        key = _deeply_nested_key(text)
        where = f" {key}" if key else ""
        raise ConfigError(f"{pyproject}:{where}: value nested too deeply to read") from None
    table = document.get("tool", {}).get("devlint")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.devlint] must be a table")
    return table


_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|\'[^\'\n]*\'')
_TABLE_LINE = re.compile(r"\s*\[\[?([^\[\]]*)\]")
_KEY_LINE = re.compile(r"\s*([^\s=\[#][^=]*?)\s*=")
_DEEP = 100


def _deeply_nested_key(text: str) -> str | None:
    """The key whose value first nests brackets more than ``_DEEP`` levels, to name it in
    the error (a rough scan: strings are skipped, comments are not)."""
    depth, table, key = 0, "", None
    for line in _STRING.sub('""', text).splitlines():
        if depth == 0 and (header := _TABLE_LINE.match(line)):
            table = f"[{header.group(1).strip()}] "
        elif depth == 0 and (match := _KEY_LINE.match(line)):
            key = table + match.group(1)
        for char in line:
            depth += 1 if char in "[{" else -1 if char in "]}" else 0
            if depth > _DEEP:
                return key
        depth = max(depth, 0)
    return None


def settings_from_table(table: dict[str, Any], pyproject: Path) -> Settings:
    """Validate a ``[tool.devlint]`` table; errors name ``pyproject`` and the key."""

    def fail(key: str, problem: str) -> ConfigError:
        return ConfigError(f"{pyproject}: [tool.devlint] {key}: {problem}")

    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise fail(unknown[0], f"unknown key (known keys: {', '.join(_KEYS)})")
    codes = {key: _codes(table[key], fail, key) for key in _CODE_KEYS if key in table}
    if codes.get("select") == ():
        raise fail("select", empty_selection("the default rules"))
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise fail("per-file-ignores", 'expected a table such as {"tests/*" = ["DVL101"]}')
    _check_patterns(list(per_file), fail, "per-file-ignores")
    patterns = {key: _patterns(table[key], fail, key) for key in _PATTERN_KEYS if key in table}
    switches = {key: table[key] for key in _SWITCH_KEYS if key in table}
    for key, value in switches.items():
        if not isinstance(value, bool):
            raise fail(key, "expected true or false")
    root = os.path.dirname(os.path.abspath(pyproject))
    names = table.get("device-names", [])
    if not _is_list_of_str(names) or not all(_is_dotted_name(name) for name in names):
        raise fail("device-names", 'expected a list of variable names such as ["dev"]')
    return Settings(
        select=codes.get("select"),
        extend_select=codes.get("extend-select", ()),
        ignore=codes.get("ignore", ()),
        extend_ignore=codes.get("extend-ignore", ()),
        per_file_ignores=tuple(
            (glob, _codes(value, fail, f"per-file-ignores.{glob!r}"))
            for glob, value in per_file.items()
        ),
        device_names=tuple(names),
        exclude=anchor_patterns(patterns["exclude"], root) if "exclude" in patterns else None,
        extend_exclude=anchor_patterns(patterns.get("extend-exclude", ()), root),
        respect_gitignore=switches.get("respect-gitignore", True),
        force_exclude=switches.get("force-exclude", False),
        root=root,
    )


def _codes(value: object, fail: Callable[[str, str], ConfigError], key: str) -> tuple[str, ...]:
    if not _is_list_of_str(value):
        raise fail(key, 'expected a list of codes such as ["DVL101"]')
    problem = unknown_code(value)
    if problem is not None:
        raise fail(key, problem)
    return tuple(value)


def _patterns(value: object, fail: Callable[[str, str], ConfigError], key: str) -> tuple[str, ...]:
    if not _is_list_of_str(value):
        raise fail(key, 'expected a list of glob patterns such as ["build", "src/gen/*.py"]')
    _check_patterns(value, fail, key)
    return tuple(value)


def _check_patterns(patterns: list[str], fail: Callable[[str, str], ConfigError], key: str) -> None:
    """Bound what every file is matched against (a hostile or generated pyproject.toml)."""
    if len(patterns) > MAX_PATTERNS:
        raise fail(key, f"{len(patterns):,} patterns, over the limit of {MAX_PATTERNS:,}")
    for pattern in patterns:
        if len(pattern) > MAX_PATTERN_LENGTH:
            raise fail(
                key,
                f"pattern {pattern[:40]!r}... is {len(pattern):,} characters long, "
                f"over the limit of {MAX_PATTERN_LENGTH:,}",
            )


def _is_list_of_str(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_dotted_name(name: str) -> bool:
    return all(part.isidentifier() for part in name.split("."))
