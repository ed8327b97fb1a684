"""New sources for some cells, written into the notebook's text and nothing else.

Only the JSON value of each changed cell's ``source`` is replaced, laid out as
the file lays it out (a list of lines one per row at its indentation, as
Jupyter writes it, or one string); outputs, metadata, key order, indentation,
escapes and the final newline of the file stay byte for byte.
"""

from __future__ import annotations

import json
import re

from devlint.notebooks.reading import Notebook

_LINE = re.compile(r"[^\n]*\n|[^\n]+")


def with_sources(notebook: Notebook, sources: dict[int, str]) -> str:
    """The notebook's text with the source of each cell numbered in ``sources`` replaced."""
    text = notebook.text
    changed = [
        cell for cell in notebook.cells if sources.get(cell.number, cell.source) != cell.source
    ]
    for cell in sorted(changed, key=lambda cell: cell.span[0], reverse=True):
        start, end = cell.span
        value = _source_value(text[start:end], sources[cell.number], _indent_before(text, start))
        text = text[:start] + value + text[end:]
    return text


def _source_value(old: str, source: str, indent: str) -> str:
    """``source`` as a JSON value laid out like ``old``."""
    ascii_only = "\\u" in old  # the file escapes what is not ASCII
    if not old.startswith("["):
        return json.dumps(source, ensure_ascii=ascii_only)
    lines = [json.dumps(line, ensure_ascii=ascii_only) for line in _LINE.findall(source)]
    if not lines:
        return "[]"
    if "\n" not in old:  # all on one row: ["a\n", "b"]
        return "[" + ("," if '","' in old else ", ").join(lines) + "]"
    item_indent = re.match(r"\[\r?\n([ \t]*)", old)
    inner = item_indent.group(1) if item_indent else indent + " "
    newline = "\r\n" if "\r\n" in old else "\n"
    return (
        "["
        + newline
        + ("," + newline).join(inner + line for line in lines)
        + newline
        + indent
        + "]"
    )


def _indent_before(text: str, start: int) -> str:
    """The indentation of the row where the value at ``start`` begins (its key's)."""
    row_start = text.rfind("\n", 0, start) + 1
    row = text[row_start:start]
    return row[: len(row) - len(row.lstrip(" \t"))]
