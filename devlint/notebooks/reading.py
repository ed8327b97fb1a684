"""A notebook's cells from its JSON, with the place of each code cell's source in the file.

The JSON is walked rather than loaded whole, so that each cell's ``source``
keeps its offsets in the file: ``--fix`` rewrites exactly those bytes, and
SARIF names the file line that shows a source line. Only nbformat 4 (what
Jupyter, JupyterLab, VS Code and Colab save) is read; anything else is a
``NotebookError`` that says why, never an empty notebook.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from devlint.inputs.reading import read_regular_file

NOTEBOOK_SUFFIX = ".ipynb"


def _integer(digits: str) -> int | str:
    """A JSON integer; one too long for Python to convert (over 4,300 digits, in metadata or
    an output) stays text: devlint reads only the cells' sources."""
    try:
        return int(digits)
    except ValueError:
        return digits


_DECODER = json.JSONDecoder(parse_int=_integer)
_SPACE = re.compile(r"[ \t\n\r]*")
_LINE_START = re.compile(r"\r\n|\r|\n")


class NotebookError(ValueError):
    """The file is not a notebook devlint can read; the message says why."""


@dataclass(frozen=True)
class Cell:
    """One cell. ``number`` counts every cell from 1, as VS Code's "Cell N" does."""

    number: int
    kind: str  # "code", "markdown" or "raw"
    source: str
    execution_count: int | None
    span: tuple[int, int]  # where the source's JSON value lies in the file's text


@dataclass(frozen=True)
class Notebook:
    text: str  # the file, decoded
    cells: tuple[Cell, ...]
    language: str | None  # the kernel's language, when the metadata names one

    @property
    def code_cells(self) -> tuple[Cell, ...]:
        return tuple(cell for cell in self.cells if cell.kind == "code")


def is_notebook(path: object) -> bool:
    """Whether devlint reads the file at ``path`` (a str or Path) as a notebook."""
    return str(path).lower().endswith(NOTEBOOK_SUFFIX)


def read_notebook(data: bytes) -> Notebook:
    """The notebook in ``data``; raises ``NotebookError`` for anything but nbformat 4 JSON."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise NotebookError(f"not UTF-8 ({error.reason} at byte {error.start})") from None
    return notebook_of_text(text)


def notebook_of_text(text: str) -> Notebook:
    """``read_notebook`` of the file's decoded text."""
    try:
        return _notebook(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        raise NotebookError(f"not valid JSON: {error.msg} at {where}") from None
    except (IndexError, RecursionError):
        raise NotebookError("not valid JSON: it ends too early or nests too deeply") from None


def _notebook(text: str) -> Notebook:
    start = _skip(text, 0)
    if not text.startswith("{", start):
        raise NotebookError("not a notebook: the file is not a JSON object")
    top: dict[str, object] = {}
    cells: list[Cell] = []
    for key, value_start, _, value in _members(text, start, keep=lambda key: key != "cells"):
        if key == "cells":
            cells = _cells(text, value_start)
        top[key] = value  # `cells` only shows it is there
    if _skip(text, _object_end(text, start)) != len(text):
        raise NotebookError("not valid JSON: text after the notebook's object")
    version = top.get("nbformat")
    if version != 4:
        raise NotebookError(
            f"nbformat {version} is not read: only nbformat 4 notebooks (what Jupyter and Colab"
            " save) are; convert it with `jupyter nbconvert --to notebook --inplace`"
            if isinstance(version, int)
            else "not a notebook: no `nbformat` version"
        )
    if "cells" not in top:
        raise NotebookError("not a notebook: no `cells` list")
    return Notebook(text, tuple(cells), _language(top.get("metadata")))


def _cells(text: str, start: int) -> list[Cell]:
    if not text.startswith("[", start):
        raise NotebookError("not a notebook: `cells` is not a list")
    cells = []
    for number, cell_start in enumerate(_elements(text, start), 1):
        if not text.startswith("{", cell_start):
            raise NotebookError(f"cell {number} is not a JSON object")
        cells.append(_cell(text, cell_start, number))
    return cells


def _cell(text: str, start: int, number: int) -> Cell:
    fields: dict[str, object] = {}
    span = (start, start)
    for key, value_start, value_end, value in _members(text, start, keep=lambda key: True):
        fields[key] = value
        if key == "source":
            span = (value_start, value_end)
    kind, source = fields.get("cell_type"), fields.get("source")
    count = fields.get("execution_count")
    if not isinstance(kind, str):
        raise NotebookError(f"cell {number} has no `cell_type`")
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        parts = source
    elif isinstance(source, str):
        parts = [source]
    else:
        raise NotebookError(f"cell {number} has no `source` text")
    if not isinstance(count, int) or isinstance(count, bool):
        count = None
    return Cell(number, kind, "".join(parts), count, span)


def file_lines(notebook: Notebook) -> dict[int, tuple[int, ...]]:
    """For each cell, the file's 1-based line that shows each of its source lines (the line
    of the JSON string the source line starts in): where SARIF points."""
    newlines = [match.start() for match in re.finditer("\n", notebook.text)]
    return {cell.number: _file_lines(notebook.text, cell, newlines) for cell in notebook.cells}


def file_lines_at(path: str) -> dict[int, tuple[int, ...]]:
    """``file_lines`` of the notebook at ``path`` as it is now; {} if it cannot be read."""
    try:
        return file_lines(read_notebook(read_regular_file(path)))
    except (OSError, NotebookError):
        return {}


def _file_lines(text: str, cell: Cell, newlines: list[int]) -> tuple[int, ...]:
    start, end = cell.span
    if not cell.source or start == end:
        return ()
    value = json.loads(text[start:end])
    parts = value if isinstance(value, list) else [value]
    part_starts = list(_elements(text, start)) if text.startswith("[", start) else [start]
    offsets, joined = [], 0
    for part in parts:
        offsets.append(joined)
        joined += len(part)
    source = "".join(parts)
    line_starts = [0] + [match.end() for match in _LINE_START.finditer(source)]
    if line_starts[-1] == len(source) and len(line_starts) > 1:
        line_starts.pop()  # a final newline starts no line
    return tuple(
        bisect.bisect_left(newlines, part_starts[max(bisect.bisect_right(offsets, at) - 1, 0)]) + 1
        for at in line_starts
    )


def _language(metadata: object) -> str | None:
    if not isinstance(metadata, dict):
        return None
    for key in ("kernelspec", "language_info"):
        entry = metadata.get(key)
        if isinstance(entry, dict):
            name = entry.get("language") if key == "kernelspec" else entry.get("name")
            if isinstance(name, str):
                return name.lower()
    return None


# A JSON walk that keeps offsets ------------------------------------------------


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _members(
    text: str, start: int, keep: Callable[[str], bool]
) -> Iterator[tuple[str, int, int, object]]:
    """(key, value start, value end, value) of each member of the object at ``start``;
    the value is decoded only when ``keep(key)``."""
    at = _skip(text, start + 1)
    if text.startswith("}", at):
        return
    while True:
        if not text.startswith('"', at):
            raise json.JSONDecodeError("expected a string key", text, at)
        key, at = json.decoder.scanstring(text, at + 1)
        at = _skip(text, at)
        if not text.startswith(":", at):
            raise json.JSONDecodeError("expected ':'", text, at)
        value_start = _skip(text, at + 1)
        if keep(key):
            value, value_end = _DECODER.raw_decode(text, value_start)
        else:
            value, value_end = None, _value_end(text, value_start)
        yield key, value_start, value_end, value
        at = _skip(text, value_end)
        if text.startswith("}", at):
            return
        if not text.startswith(",", at):
            raise json.JSONDecodeError("expected ',' or '}'", text, at)
        at = _skip(text, at + 1)


def _elements(text: str, start: int) -> Iterator[int]:
    """The start offset of each element of the array at ``start``."""
    at = _skip(text, start + 1)
    if text.startswith("]", at):
        return
    while True:
        yield at
        at = _skip(text, _value_end(text, at))
        if text.startswith("]", at):
            return
        if not text.startswith(",", at):
            raise json.JSONDecodeError("expected ',' or ']'", text, at)
        at = _skip(text, at + 1)


def _value_end(text: str, start: int) -> int:
    return _DECODER.raw_decode(text, start)[1]


def _object_end(text: str, start: int) -> int:
    return _value_end(text, start)
