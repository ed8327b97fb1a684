"""The flake8 plugin: devlint's findings as flake8 errors.

flake8 selects codes, honours ``# noqa`` and adds 1 to columns itself, so the
plugin reports every enabled rule with 0-based columns and leaves the rest to
flake8. Rules that are off by default go into flake8's default ignore list.

flake8 loads and runs every installed plugin whatever ``--select`` says, so a
run that selects no DVL code (``flake8 --select F``) must cost next to
nothing: importing this module imports neither LibCST nor the rules, and
``parse_options`` decides once whether flake8 could report any DVL code; when
it could not, ``run`` returns at once.

flake8 hands a plugin one file at a time, but a file's bugs may show only in
the modules it imports: the plugin reads the project modules a file imports
(found from the file's own folder, its project root and ``src/``, never
outside the project) through a per-process index, so each is read and parsed
once per flake8 process, whichever files import it.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from devlint import __version__
from devlint.frontends.terminal import printable  # no dependencies: loading stays cheap

ALL_CODES = ("DVL",)
OFF_BY_DEFAULT = ("DVL204", "DVL407")
"""The rules that are off by default, named here so that loading the plugin imports no rule
(tests/test_flake8_plugin.py checks the list against the rules)."""


class Plugin:
    """flake8 tree plugin (flake8 treats a plugin as one when ``__init__`` takes ``tree``)."""

    name = "devlint"
    version = __version__
    device_names: tuple[str, ...] = ()
    selected = True
    """Whether flake8's selection lets any DVL code through (set by ``parse_options``)."""

    def __init__(self, tree: ast.AST, lines: list[str], filename: str) -> None:
        # ``tree`` is unused: devlint needs LibCST's tree, parsed from the same lines.
        self._lines = lines
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
        option_manager.extend_default_ignore(list(OFF_BY_DEFAULT))

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        cls.device_names = tuple(options.devlint_device_names)
        cls.selected = any_code_selected(options)

    def run(self) -> Iterator[tuple[int, int, str, type[Plugin]]]:
        if not self.selected:
            return
        from devlint.config import Settings  # imported once a file needs linting
        from devlint.running.engine import lint_source, project_importer  # (LibCST and the rules)

        settings = Settings(select=ALL_CODES, device_names=self.device_names)
        source = "".join(self._lines)
        path = Path(self._filename)
        importer = project_importer(path, settings) if path.is_file() else None  # not stdin
        found = lint_source(
            source, self._filename, settings, honour_noqa=False, fixes=False, importer=importer
        )
        for diagnostic in found:  # flake8 shows no fixes: none is built
            # flake8 prints it as it is: a quoted string literal must not reach the terminal raw
            message = printable(f"{diagnostic.code} {diagnostic.message}", one_line=True)
            yield diagnostic.line, diagnostic.column, message, type(self)


def any_code_selected(options: argparse.Namespace) -> bool:
    """Whether flake8 would report any DVL code under its options (select, extend-select,
    ignore, extend-ignore and the defaults), as flake8's own ``DecisionEngine`` decides."""
    from flake8.style_guide import Decision, DecisionEngine

    engine = DecisionEngine(options)
    if not any(prefix.startswith("DVL") or "DVL".startswith(prefix) for prefix in engine.selected):
        return False  # no selected prefix can match a DVL code: decided without the rules
    from devlint.notices import NOTICE_SUMMARIES
    from devlint.rules import all_rules

    codes = [*NOTICE_SUMMARIES, *(rule.meta.code for rule in all_rules())]
    return any(engine.decision_for(code) is Decision.Selected for code in codes)
