"""A notebook's code cells as one Python program, and its lines mapped back to cells.

The cells run in the order of their execution counts when every code cell
with code has one (the notebook was saved after running all of it, and the
counts say in which order); otherwise, in document order ("Run All"). A
device chosen in cell 2 is then known in cell 9. Each cell's text is its
source with IPython syntax made inert (``magics``), ending in a newline, so a
program line is always one cell's line, with the same columns (but for a cell
that IPython dedents: ``Program.indents``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from devlint.notebooks.magics import neutralise
from devlint.notebooks.reading import Cell, Notebook

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Program:
    """The code of ``cells`` joined; ``places[n - 1]`` is (cell, line) of program line n.
    The cells in ``blank`` count as blank lines (cells that cannot be parsed); the
    lines of a cell in ``indents`` lost that many leading characters (IPython removes
    the indentation of a cell whose first line is indented)."""

    text: str
    cells: tuple[Cell, ...]
    places: tuple[tuple[int, int], ...]
    blank: frozenset[int] = frozenset()
    indents: dict[int, int] = field(default_factory=dict)

    def place(self, line: int) -> tuple[int, int]:
        """(cell number, line in the cell) of a 1-based program line; past the end: the
        last line's place."""
        return self.places[min(max(line, 1), len(self.places)) - 1] if self.places else (0, 1)

    def line_name(self, line: int) -> str:
        """A program line as messages name it: ``line 4 of cell 2``."""
        cell, in_cell = self.place(line)
        return f"line {in_cell} of cell {cell}"

    @cached_property
    def lines(self) -> list[str]:
        """The program's lines, without their ends."""
        return self.text.split("\n")

    def displays(self, line: int) -> bool:
        """Whether ``line`` is the last line with code of its cell: IPython shows the value of
        a cell's last expression (``Out[n]``)."""
        if not 0 < line <= len(self.places):
            return False
        cell = self.places[line - 1][0]
        for index in range(line, len(self.places)):  # the rest of its cell
            if self.places[index][0] != cell:
                break
            if _is_code(self.lines[index]):
                return False
        return True

    def without(self, cell: int) -> Program:
        """This program with ``cell``'s lines blank too."""
        return _joined(self.cells, self.blank | {cell})


def program_of(notebook: Notebook) -> Program:
    """The notebook's code cells as one program, in the order they run."""
    return _joined(run_order(notebook.code_cells), frozenset())


def run_order(cells: tuple[Cell, ...]) -> tuple[Cell, ...]:
    """Execution-count order if every code cell with code has a count, else document order."""
    with_code = [cell for cell in cells if cell.source.strip()]
    if with_code and all(cell.execution_count is not None for cell in with_code):
        return tuple(sorted(cells, key=lambda cell: cell.execution_count or 0))
    return cells


def _joined(cells: tuple[Cell, ...], blank: frozenset[int]) -> Program:
    texts: list[str] = []
    places: list[tuple[int, int]] = []
    indents: dict[int, int] = {}
    for cell in cells:
        lines = _LINE_END.split(cell.source)
        if lines[-1] == "":
            lines.pop()  # the newline after the last line
        if cell.number in blank:
            text = "\n" * len(lines)
        else:
            text, indent = cell_code(cell.source)
            ends_line = _LINE_END.search(cell.source[-1:])  # an inert cell's text is all ends
            text = text if not lines or ends_line else text + "\n"
            if indent:
                indents[cell.number] = indent
        texts.append(text)
        places += [(cell.number, line) for line in range(1, len(lines) + 1)]
    return Program("".join(texts), cells, tuple(places), blank, indents)


def cell_code(source: str) -> tuple[str, int]:
    """A cell's source as Python runs it: IPython lines made inert, dedented as IPython
    dedents it; and how many characters each line lost to the dedent."""
    return _dedented(neutralise(source))


def _dedented(text: str) -> tuple[str, int]:
    """``text`` without the indentation of its first line with code, if every line with code
    has it (as IPython runs such a cell); and how many characters each line lost."""
    lines = text.splitlines(keepends=True)
    first = next((line for line in lines if line.strip()), "")
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    if not indent or not all(line.startswith(indent) for line in lines if line.strip()):
        return text, 0
    return "".join(line[len(indent) :] if line.strip() else line for line in lines), len(indent)


def _is_code(line: str) -> bool:
    text = line.strip()
    return bool(text) and not text.startswith("#")
