"""Bytes of a Python file to text, as Python itself decodes them.

Apart from the engine so that output and the cache can read files without
importing LibCST.
"""

from __future__ import annotations

import re
import tokenize
from io import BytesIO

from devlint.inputs.reading import read_regular_file
from devlint.notebooks.reading import NotebookError, is_notebook, read_notebook

Lines = dict[int | None, list[str]]
"""A file's lines by cell: ``{None: lines}`` for Python, ``{cell number: lines}`` for a
notebook (and ``None: [""]``, where notices about the whole notebook sit)."""

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def decode_source(data: bytes) -> tuple[str | None, str]:
    """Text of a Python file (PEP 263 cookie, BOM), or None and the reason."""
    if b"\x00" in data:
        return None, "binary file (contains NUL bytes)"
    try:
        encoding, _ = tokenize.detect_encoding(BytesIO(data).readline)
    except SyntaxError as error:
        return None, str(error)
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as error:
        return None, f"not valid {encoding}: {error}"
    return text.removeprefix("\ufeff"), ""


def read_lines(path: str) -> Lines | None:
    """A file's lines, without their endings, as the engine decodes it; None if it cannot be
    read or decoded (output quotes reported lines from it)."""
    try:
        return lines_of_data(read_regular_file(path), path)
    except OSError:
        return None


def lines_of_data(data: bytes, name: str) -> Lines | None:
    """``read_lines`` of a file's bytes; ``name`` says whether it is a notebook."""
    if is_notebook(name):
        try:
            notebook = read_notebook(data)
        except NotebookError:
            return None
        return {None: [""]} | {cell.number: split_lines(cell.source) for cell in notebook.cells}
    source, _ = decode_source(data)
    return None if source is None else {None: split_lines(source)}


def split_lines(source: str) -> list[str]:
    """Lines as Python and LibCST count them (only CR, LF and CRLF end one): line ``n`` of a
    diagnostic is ``split_lines(source)[n - 1]``."""
    return _LINE_BREAK.split(source)
