"""Settings: which codes run, per-file ignores, extra device-variable names.

They come from ``[tool.devlint]`` in the nearest ``pyproject.toml`` that has
one, so that the CLI, pre-commit and the editor agree on a project's setup.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devlint.codes import unknown_code

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
    ``device_names`` are extra variable names that hold a device (``"dev"``).
    ``root`` is the directory that ``per_file_ignores`` globs are relative to.
    """

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    device_names: tuple[str, ...] = ()
    root: str | None = field(default=None, compare=False)


DEFAULT_SETTINGS = Settings()

_CODE_KEYS = ("select", "extend-select", "ignore")
_KEYS = (*_CODE_KEYS, "per-file-ignores", "device-names")


class ConfigError(Exception):
    """A configuration the user must fix; the message names the file and the key."""


def load_settings(start: Path) -> Settings:
    """Settings of the nearest ``pyproject.toml`` at or above ``start`` with ``[tool.devlint]``.

    ``start`` is a file or directory. Without such a file the defaults apply.
    """
    directory = Path(os.path.abspath(start))  # not resolve(): that raises on symlink loops
    if not directory.is_dir():
        directory = directory.parent
    for candidate in (directory, *directory.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            table = _devlint_table(pyproject)
            if table is not None:
                return settings_from_table(table, pyproject)
    return DEFAULT_SETTINGS


def load_settings_file(pyproject: Path) -> Settings:
    """Settings of this ``pyproject.toml`` (``--config``); defaults if it has no table."""
    if not pyproject.is_file():
        raise ConfigError(f"{pyproject}: no such file")
    table = _devlint_table(pyproject)
    return settings_from_table(table or {}, pyproject)


def _devlint_table(pyproject: Path) -> dict[str, Any] | None:
    try:
        text = pyproject.read_text(encoding="utf-8")
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
    table = document.get("tool", {}).get("devlint")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.devlint] must be a table")
    return table


def settings_from_table(table: dict[str, Any], pyproject: Path) -> Settings:
    """Validate a ``[tool.devlint]`` table; errors name ``pyproject`` and the key."""

    def fail(key: str, problem: str) -> ConfigError:
        return ConfigError(f"{pyproject}: [tool.devlint] {key}: {problem}")

    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise fail(unknown[0], f"unknown key (known keys: {', '.join(_KEYS)})")
    codes = {key: _codes(table[key], fail, key) for key in _CODE_KEYS if key in table}
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise fail("per-file-ignores", 'expected a table such as {"tests/*" = ["DVL101"]}')
    names = table.get("device-names", [])
    if not _is_list_of_str(names) or not all(_is_dotted_name(name) for name in names):
        raise fail("device-names", 'expected a list of variable names such as ["dev"]')
    return Settings(
        select=codes.get("select"),
        extend_select=codes.get("extend-select", ()),
        ignore=codes.get("ignore", ()),
        per_file_ignores=tuple(
            (glob, _codes(value, fail, f"per-file-ignores.{glob!r}"))
            for glob, value in per_file.items()
        ),
        device_names=tuple(names),
        root=os.path.dirname(os.path.abspath(pyproject)),
    )


def _codes(value: object, fail: Callable[[str, str], ConfigError], key: str) -> tuple[str, ...]:
    if not _is_list_of_str(value):
        raise fail(key, 'expected a list of codes such as ["DVL101"]')
    problem = unknown_code(value)
    if problem is not None:
        raise fail(key, problem)
    return tuple(value)


def _is_list_of_str(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_dotted_name(name: str) -> bool:
    return all(part.isidentifier() for part in name.split("."))
