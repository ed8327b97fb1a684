"""Output for people: findings as ruff and flake8 print them, excerpts, colour, a summary.

``path:line:col: CODE [severity] message`` per finding (1-based line and
column), an optional excerpt of the source with the span underlined
(``--show-source``), or a count per code instead (``--statistics``); colour
only on a terminal (``NO_COLOR`` turns it off, ``FORCE_COLOR`` on, ``--color``
overrides both), and one closing summary line on stderr (not with
``--quiet``): findings by code, in how many of the files checked, how many
fixes ``--fix`` would apply (``devlint.running.fix_count``). Text from files and caches
passes through ``printable``.
"""

from __future__ import annotations

import os
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from devlint.diagnostic import Diagnostic, Severity
from devlint.frontends.terminal import printable
from devlint.inputs.decoding import Lines, read_lines
from devlint.notices import NOTICE_SUMMARIES
from devlint.running.fix_count import NO_FIXES, FixCount

if TYPE_CHECKING:
    from devlint.rule import RuleMeta

COLOR_CHOICES = ("auto", "always", "never")
EXCERPT_LINES = 4
"""Longest span shown in full; longer ones show their first and last lines."""
TAB_WIDTH = 4

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_SEVERITY_COLOR = {
    Severity.ERROR: "\x1b[1;31m",
    Severity.WARNING: "\x1b[1;33m",
    Severity.INFO: "\x1b[1;36m",
}
_GUTTER = "\x1b[1;34m"
_DIM = "\x1b[2m"


def use_color(stream: TextIO, mode: str = "auto") -> bool:
    """Whether to colour ``stream``: ``--color`` wins, then NO_COLOR, FORCE_COLOR, a terminal."""
    if mode != "auto":
        return mode == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


@dataclass(frozen=True)
class Painter:
    """Wraps text in ANSI colours, or leaves it alone."""

    color: bool

    def paint(self, text: str, style: str) -> str:
        return f"{style}{text}{_RESET}" if self.color and text else text


def format_diagnostic(d: Diagnostic, painter: Painter) -> str:
    """``path:line:col: CODE [severity] message``, the column 1-based; in a notebook
    ``nb.ipynb:cell 3:12:5: ...`` (ruff's convention)."""
    colon = painter.paint(":", _DIM)
    path, code, message = (printable(text, one_line=True) for text in (d.path, d.code, d.message))
    color = _SEVERITY_COLOR[d.severity]
    cell = f"{colon}cell {d.cell}" if d.cell is not None else ""
    return (
        f"{painter.paint(path, _BOLD)}{cell}{colon}{d.line}{colon}{d.column + 1}{colon} "
        f"{painter.paint(code, color)} {painter.paint(f'[{d.severity.value}]', color)} {message}"
    )


def source_excerpt(d: Diagnostic, lines: Sequence[str], painter: Painter) -> list[str]:
    """The reported lines with the span underlined by carets; [] if they are not there."""
    if not 0 < d.line <= len(lines):
        return []
    last = min(max(d.end_line, d.line), len(lines))
    numbers = list(range(d.line, last + 1))
    if len(numbers) > EXCERPT_LINES:
        numbers = [*numbers[:2], 0, *numbers[-2:]]  # 0: the elision mark
    width = len(str(last))
    bar = painter.paint(f"{'':>{width}} |", _GUTTER)
    out = [bar]
    for number in numbers:
        if number == 0:
            out.append(painter.paint(f"{'...':>{width}}", _GUTTER))
            continue
        text = lines[number - 1]
        start = d.column if number == d.line else len(text) - len(text.lstrip())
        end = d.end_column if number == d.end_line else len(text)
        start, end = min(start, len(text)), min(max(end, start), len(text))
        out.append(f"{painter.paint(f'{number:>{width}} |', _GUTTER)} {_shown(text)}")
        offset = _display_width(_shown(text[:start]))
        carets = "^" * max(1, _display_width(_shown(text[:end])) - offset)
        out.append(
            f"{bar} {' ' * offset}{painter.paint(carets, _SEVERITY_COLOR[d.severity])}".rstrip()
        )
    return out


def summary(diagnostics: Sequence[Diagnostic], checked: int, fixes: FixCount = NO_FIXES) -> str:
    """The closing line: how many problems, of which codes, in how many of the files checked;
    how many fixes ``--fix`` would apply.

    ``Found 3 problems in 2 of 12 files (DVL101: 2, DVL201: 1); 1 fixable with --fix.``
    ``checked`` counts every path looked at, those that could not be read included; a
    path reported about was looked at, so it never counts fewer than the paths reported.
    ``fixes`` is what ``--fix`` would do (``devlint.running.fix_count``), not the findings that
    carry a fix; the fixes left that only ``--unsafe-fixes`` applies are counted apart
    (``1 more with --unsafe-fixes``).
    """
    if not diagnostics:
        return f"No problems found in {_plural(checked, 'file')}."
    with_problems = len({d.path for d in diagnostics})
    checked = max(checked, with_problems)
    files = _plural(checked, "file")
    if with_problems < checked:
        files = f"{with_problems} of {files}"
    counts = Counter(d.code for d in diagnostics)
    by_code = ", ".join(f"{code}: {counts[code]}" for code in sorted(counts))
    line = f"Found {_plural(len(diagnostics), 'problem')} in {files} ({by_code})"
    safe, unsafe = fixes.applied, fixes.unsafe_left
    if safe:
        line += f"; {safe} fixable with --fix"
    if unsafe:
        line += f"{',' if safe else ';'} {unsafe} {'more ' if safe else ''}with --unsafe-fixes"
    return f"{line}."


def print_text(
    diagnostics: Sequence[Diagnostic],
    checked: int,
    out: TextIO,
    err: TextIO,
    *,
    show_source: bool = False,
    color: str = "auto",
    statistics: bool = False,
    quiet: bool = False,
    fixes: FixCount = NO_FIXES,
) -> None:
    """Findings (or with ``statistics`` their count per code) on ``out``, then the
    summary line on ``err`` unless ``quiet``; ``fixes``: what ``--fix`` would apply."""
    painter = Painter(use_color(out, color))
    if statistics:
        for line in statistics_table(diagnostics, fixes):
            print(line, file=out)
    else:
        _print_findings(diagnostics, out, painter, show_source=show_source)
    out.flush()
    if not quiet:
        line = printable(summary(diagnostics, checked, fixes), one_line=True)
        print(Painter(use_color(err, color)).paint(line, _BOLD), file=err)


def _print_findings(
    diagnostics: Sequence[Diagnostic], out: TextIO, painter: Painter, *, show_source: bool
) -> None:
    cache: dict[str, Lines | None] = {}
    for d in diagnostics:
        print(format_diagnostic(d, painter), file=out)
        if show_source:
            if d.path not in cache:
                cache[d.path] = read_lines(d.path)
            excerpt = source_excerpt(d, (cache[d.path] or {}).get(d.cell) or [], painter)
            if excerpt:
                print("\n".join(excerpt), file=out)
                print(file=out)


def statistics_table(diagnostics: Sequence[Diagnostic], fixes: FixCount = NO_FIXES) -> list[str]:
    """``--statistics``, as ruff prints it: count, code, ``[*]`` when ``--fix`` would apply
    a fix of that code (``fixes``), and the rule's name (a notice's summary); most frequent
    first."""
    from devlint.rules import all_rules  # only here: naming codes needs the rules

    names = {rule.meta.code: rule.meta.name for rule in all_rules()} | NOTICE_SUMMARIES
    counts = Counter(d.code for d in diagnostics)
    fixable = set(fixes.codes)
    width = len(str(max(counts.values(), default=0)))
    code_width = max(map(len, counts), default=0)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [
        printable(
            f"{count:>{width}}  {code:<{code_width}}  "
            f"{'[*] ' if code in fixable else '    '}{names.get(code, '')}".rstrip(),
            one_line=True,
        )
        for code, count in rows
    ]


def rules_table(metas: Sequence[RuleMeta]) -> str:
    """``devlint rules``: code, name, severity, fixable, summary."""
    rows = [("CODE", "NAME", "SEVERITY", "FIX", "SUMMARY")] + [
        (
            meta.code,
            meta.name,
            meta.severity.value,
            "yes" if meta.fixable else "-",
            meta.summary + ("" if meta.default_enabled else " (off by default)"),
        )
        for meta in metas
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    lines = []
    for *padded, text in rows:
        cells = [cell.ljust(width) for cell, width in zip(padded, widths, strict=True)]
        lines.append("  ".join([*cells, text]))
    return "\n".join(lines)


def _shown(text: str) -> str:
    """A source line as printed: control characters escaped, tabs to spaces (to the next
    multiple of TAB_WIDTH), so carets line up."""
    return printable(text).expandtabs(TAB_WIDTH)


def _display_width(text: str) -> int:
    """Terminal columns: wide (CJK, emoji) characters take two, combining marks none."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
