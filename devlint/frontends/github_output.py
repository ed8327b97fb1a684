"""``--format github``: GitHub Actions workflow commands, one annotation per finding.

``::error file=train.py,line=7,col=12,endLine=7,endColumn=17,title=DVL101::message``
puts the finding on the pull request's diff. Values are escaped as the Actions
toolkit escapes them (``%`` and line breaks everywhere, ``:`` and ``,`` in
properties), so no path or message can end the command early or start another one;
control characters are shown as escapes, as on a terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from devlint.diagnostic import Diagnostic, Severity
from devlint.terminal import printable

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def annotation(d: Diagnostic) -> str:
    """The workflow command for one finding (1-based columns, as in the text format)."""
    properties = {
        "file": d.path,
        "line": d.line,
        "col": d.column + 1,
        "endLine": max(d.end_line, d.line),
        "endColumn": d.end_column + 1,
        "title": d.code,
    }
    listed = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
    return f"::{LEVELS[d.severity]} {listed}::{_escape_data(d.message)}"


def print_github(diagnostics: Sequence[Diagnostic], out: TextIO) -> None:
    """Every finding as an annotation on ``out``; nothing else (the log shows them)."""
    for d in diagnostics:
        print(annotation(d), file=out)


def _escape_data(text: str) -> str:
    """``printable`` has already turned CR into ``\\r``: only LF is left to encode."""
    return printable(text).replace("%", "%25").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
