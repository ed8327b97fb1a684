"""The flake8 plugin: devlint's findings as flake8 errors.

flake8 selects codes, honours ``# noqa`` and adds 1 to columns itself, so the
plugin reports every enabled rule with 0-based columns and leaves the rest to
flake8. Rules that are off by default go into flake8's default ignore list.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
from typing import Any

from devlint import __version__
from devlint.config import Settings
from devlint.engine import lint_source
from devlint.rules import all_rules
from devlint.terminal import printable

ALL_CODES = ("DVL",)


class Plugin:
    """flake8 tree plugin (flake8 treats a plugin as one when ``__init__`` takes ``tree``)."""

    name = "devlint"
    version = __version__
    device_names: tuple[str, ...] = ()

    def __init__(self, tree: ast.AST, lines: list[str], filename: str) -> None:
        # ``tree`` is unused: devlint needs LibCST's tree, parsed from the same lines.
        self._source = "".join(lines)
        self._filename = filename

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        option_manager.add_option(
            "--devlint-device-names",
            default="",
            parse_from_config=True,
            comma_separated_list=True,
            help="extra variable names that hold a torch device (comma-separated)",
        )
        option_manager.extend_default_ignore(
            [rule.meta.code for rule in all_rules() if not rule.meta.default_enabled]
        )

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        cls.device_names = tuple(options.devlint_device_names)

    def run(self) -> Iterator[tuple[int, int, str, type[Plugin]]]:
        settings = Settings(select=ALL_CODES, device_names=self.device_names)
        found = lint_source(self._source, self._filename, settings, honour_noqa=False, fixes=False)
        for diagnostic in found:  # flake8 shows no fixes: none is built
            # flake8 prints it as it is: a quoted string literal must not reach the terminal raw
            message = printable(f"{diagnostic.code} {diagnostic.message}", one_line=True)
            yield diagnostic.line, diagnostic.column, message, type(self)
