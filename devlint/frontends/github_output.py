"""``--format github``: GitHub Actions workflow commands, one annotation per finding.

``::error file=train.py,line=7,col=12,endLine=7,endColumn=17,title=DVL101::message``
puts the finding on the pull request's diff. Values are escaped as the Actions
toolkit escapes them (``%`` and line breaks everywhere, ``:`` and ``,`` in
properties), so no path or message can end the command early or start another one;
control characters are shown as escapes, as on a terminal.

GitHub shows a notebook as its file, JSON and all: a finding in a cell points,
as in SARIF, at the lines of the ``.ipynb`` that show the cell's lines, with no
column (a cell's column is not the JSON line's), and its message starts with
the cell, line and column (``Cell 6, line 5, column 41: ...``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from devlint.diagnostic import Diagnostic, Severity
from devlint.frontends.terminal import printable
from devlint.notebooks.reading import file_lines_at

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def annotation(d: Diagnostic, shown_at: dict[int, tuple[int, ...]] | None = None) -> str:
    """The workflow command for one finding (1-based columns, as in the text format);
    ``shown_at``: for a finding in a notebook's cell, the file's line that shows each of
    each cell's lines (``file_lines``)."""
    properties: dict[str, object] = {"file": d.path}
    message = d.message
    if d.cell is None:
        properties |= {
            "line": d.line,
            "col": d.column + 1,
            "endLine": max(d.end_line, d.line),
            "endColumn": d.end_column + 1,
        }
    else:
        shown = (shown_at or {}).get(d.cell, ())
        start = shown[d.line - 1] if 0 < d.line <= len(shown) else 1
        end = shown[d.end_line - 1] if 0 < d.end_line <= len(shown) else start
        properties |= {"line": start, "endLine": max(start, end)}
        message = f"Cell {d.cell}, line {d.line}, column {d.column + 1}: {message}"
    properties["title"] = d.code
    listed = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
    return f"::{LEVELS[d.severity]} {listed}::{_escape_data(message)}"


def print_github(diagnostics: Sequence[Diagnostic], out: TextIO) -> None:
    """Every finding as an annotation on ``out``; nothing else (the log shows them).
    A notebook is read once, for the file lines that show its cells' lines."""
    shown_at: dict[str, dict[int, tuple[int, ...]]] = {}
    for d in diagnostics:
        if d.cell is not None and d.path not in shown_at:
            shown_at[d.path] = file_lines_at(d.path)
        print(annotation(d, shown_at.get(d.path)), file=out)


def _escape_data(text: str) -> str:
    """``printable`` has already turned CR into ``\\r``: only LF is left to encode."""
    return printable(text).replace("%", "%25").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
