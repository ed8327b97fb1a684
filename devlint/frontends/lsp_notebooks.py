"""Notebooks in the editor, through LSP 3.17 notebook document sync (VS Code sends them so).

The client sends a notebook as a notebook document whose code cells are text
documents; pygls keeps both in its workspace. The language server lints the
notebook as ``devlint check`` lints the file (``devlint.notebooks``), from the
cells' current text and the execution order the client reports, and
publishes each cell's diagnostics for that cell's document. This module turns
the client's notebook into devlint's and sorts the findings by cell.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types

from devlint.diagnostic import Diagnostic
from devlint.notebooks.reading import Cell, Notebook

NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(
            notebook="*", cells=[types.NotebookCellLanguage(language="python")]
        )
    ]
)
_KINDS = {types.NotebookCellKind.Code: "code", types.NotebookCellKind.Markup: "markdown"}


def notebook_of(cells: Sequence[tuple[types.NotebookCell, str]]) -> Notebook:
    """devlint's notebook from the client's cells, each with its current text."""
    return Notebook(
        "",
        tuple(
            Cell(
                number,
                _KINDS.get(cell.kind, "raw"),
                text,
                cell.execution_summary.execution_order if cell.execution_summary else None,
                (0, 0),
            )
            for number, (cell, text) in enumerate(cells, 1)
        ),
        None,
    )


def by_cell(diagnostics: Sequence[Diagnostic]) -> dict[int | None, list[Diagnostic]]:
    """The diagnostics of each cell (``None``: about the whole notebook)."""
    cells: dict[int | None, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        cells.setdefault(diagnostic.cell, []).append(diagnostic)
    return cells
