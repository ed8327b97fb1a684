"""Codes for files devlint could not analyse or fix. Not rules: no examples, always shown."""

from __future__ import annotations

from devlint.diagnostic import Diagnostic, Severity
from devlint.inputs.reading import FileTooLargeError

SYNTAX_ERROR = "DVL001"
UNREADABLE = "DVL002"
INTERNAL_ERROR = "DVL003"
TOO_COMPLEX = "DVL004"
NOT_REWRITTEN = "DVL005"
PARSER_LIMITATION = "DVL006"

NOTICE_SUMMARIES = {
    SYNTAX_ERROR: "file could not be parsed; it was not analysed",
    UNREADABLE: "file could not be read or decoded; it was not analysed",
    INTERNAL_ERROR: "devlint failed on this file; please report it",
    TOO_COMPLEX: "file too large or too deeply nested to analyse; it was skipped",
    NOT_REWRITTEN: "file not rewritten by --fix or --add-noqa (read-only, its real path outside"
    " the paths given, hard-linked, or changed meanwhile); its problems are reported unfixed",
    PARSER_LIMITATION: "Python accepts the file but LibCST, devlint's parser, cannot read it;"
    " it was not analysed",
}


def notice(path: str, code: str, message: str, line: int = 1, column: int = 0) -> Diagnostic:
    """A diagnostic that says why a file was not (fully) analysed. Only a limitation of
    devlint's parser is a warning: the user's code is fine."""
    severity = Severity.WARNING if code == PARSER_LIMITATION else Severity.ERROR
    return Diagnostic(path, line, column, line, column, code, message, severity)


def unreadable(path: str, error: OSError) -> Diagnostic:
    """The notice for a file that could not be read: too large to analyse (skipped unread,
    as ``limits`` skips a text too large), or unreadable."""
    if isinstance(error, FileTooLargeError):
        return notice(path, TOO_COMPLEX, f"{error.strerror} (skipped)")
    return notice(path, UNREADABLE, f"cannot read file: {error.strerror or error}")
