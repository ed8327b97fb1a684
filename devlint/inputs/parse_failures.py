"""What to tell the user when LibCST refuses a file: their syntax error, or its limitation.

LibCST's messages and places are poor for some errors (its tokenizer's errors all say
line 1, column 0; an unclosed bracket is "expected one of !=, %, &, …" at the end of the
file), and it refuses some valid Python (a backslash continuation alone on a line before
``else:`` or an indented block). CPython's own parser, which is far faster, is asked
only when LibCST fails: where it refuses the text too, its message and place are the
user's syntax error (DVL001); where it accepts the text, the file is valid and the
notice says that devlint could not read it (DVL006, a warning). ``ast.parse`` compiles
nothing and runs nothing.
"""

from __future__ import annotations

import ast
import warnings

import libcst as cst

from devlint.diagnostic import Diagnostic
from devlint.inputs.decoding import split_lines
from devlint.notices import PARSER_LIMITATION, SYNTAX_ERROR, notice


def parse_failure(path: str, source: str, error: Exception, what: str = "") -> Diagnostic:
    """The notice for ``source`` (the file at ``path``, or ``what``: "cell 3") that LibCST
    refused with ``error``; its position is within ``source``."""
    subject = f" {what}" if what else ""
    left = " (cell not analysed)" if what else " (not analysed)"
    try:
        with warnings.catch_warnings():  # invalid escapes and the like: not devlint's to say
            warnings.simplefilter("ignore")
            ast.parse(source)
    except SyntaxError as python_error:
        line, column = _within(source, python_error.lineno or 1, (python_error.offset or 1) - 1)
        return notice(
            path, SYNTAX_ERROR, f"cannot parse{subject}: {python_error.msg}{left}", line, column
        )
    except (ValueError, RecursionError, MemoryError):  # a NUL byte; too deep for CPython too
        return _libcst_notice(path, source, error, subject, left)
    line, column = _libcst_place(source, error)
    reason = error.message if isinstance(error, cst.ParserSyntaxError) else str(error)
    message = (
        f"Python accepts{subject or ' this file'}, but LibCST, devlint's parser, cannot read it"
        f" ({reason}){left}"
    )
    return notice(path, PARSER_LIMITATION, message, line, column)


def _libcst_notice(path: str, source: str, error: Exception, subject: str, left: str) -> Diagnostic:
    line, column = _libcst_place(source, error)
    reason = error.message if isinstance(error, cst.ParserSyntaxError) else str(error)
    return notice(path, SYNTAX_ERROR, f"cannot parse{subject}: {reason}{left}", line, column)


def _libcst_place(source: str, error: Exception) -> tuple[int, int]:
    if isinstance(error, cst.ParserSyntaxError):
        return _within(source, error.raw_line, error.raw_column)
    return 1, 0


def _within(source: str, line: int, column: int) -> tuple[int, int]:
    """``line`` and ``column`` moved into ``source`` (a parser may point past its end)."""
    lines = split_lines(source)
    line = min(max(line, 1), len(lines))
    return line, min(max(column, 0), len(lines[line - 1]))
