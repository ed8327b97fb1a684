"""Notebooks in the editor: a real client over stdio with LSP 3.17 notebook document sync."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path
from test_lsp import Editor, apply, position, session

SETUP = """import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,))), batch_size=4)
model = nn.Linear(4, 2).to(device)
"""
LOOP = """!nvidia-smi
for inputs, targets in loader:
    loss = nn.functional.cross_entropy(model(inputs.to(device)), targets)
"""
FIXED_LOOP = LOOP.replace("), targets)", "), targets.to(device))")


def _open_notebook(editor: Editor, cells: list[tuple[types.NotebookCellKind, str]]) -> list[str]:
    """didOpen of a notebook ``nb.ipynb`` with these cells; the cells' URIs."""
    path = editor.root / "nb.ipynb"
    uris = [f"vscode-notebook-cell:{path.as_posix()}#cell{index}" for index in range(len(cells))]
    editor.client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=from_fs_path(str(path)),
                notebook_type="jupyter-notebook",
                version=1,
                cells=[
                    types.NotebookCell(kind=kind, document=uri)
                    for uri, (kind, _) in zip(uris, cells, strict=True)
                ],
            ),
            cell_text_documents=[
                types.TextDocumentItem(
                    uri=uri,
                    language_id="python" if kind == types.NotebookCellKind.Code else "markdown",
                    version=1,
                    text=text,
                )
                for uri, (kind, text) in zip(uris, cells, strict=True)
            ],
        )
    )
    return uris


def _change_cell(editor: Editor, cell_uri: str, text: str) -> None:
    notebook = from_fs_path(str(editor.root / "nb.ipynb"))
    editor.client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(version=2, uri=notebook),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(uri=cell_uri, version=2),
                            changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                        )
                    ]
                )
            ),
        )
    )


def test_a_notebook_gets_diagnostics_and_fixes_per_cell(tmp_path: Path) -> None:
    @session(tmp_path)
    async def body(editor: Editor) -> None:
        markdown, setup, loop = _open_notebook(
            editor,
            [
                (types.NotebookCellKind.Markup, "# Training"),
                (types.NotebookCellKind.Code, SETUP),
                (types.NotebookCellKind.Code, LOOP),
            ],
        )
        (batch,) = await editor.diagnostics(loop, version=1)
        assert batch.code == "DVL301"
        assert position(batch.range) == ((2, 65), (2, 72))  # `targets`, line 3 of the cell
        assert "(batch from `loader` at line 2 of cell 3)" in batch.message
        assert "(moved to `device` at line 6 of cell 2)" in batch.message
        assert await editor.diagnostics(setup, version=1) == ()
        assert not any(p.uri == markdown for p in editor.published)

        (action,) = await editor.code_actions(loop, batch, only=["quickfix"])
        assert apply(LOOP, action) == FIXED_LOOP

        before = len(editor.published)
        _change_cell(editor, loop, FIXED_LOOP)
        assert await editor.diagnostics(loop, version=2, after=before) == ()

        before = len(editor.published)
        editor.client.notebook_document_did_close(
            types.DidCloseNotebookDocumentParams(
                notebook_document=types.NotebookDocumentIdentifier(
                    uri=from_fs_path(str(tmp_path / "nb.ipynb"))
                ),
                cell_text_documents=[
                    types.TextDocumentIdentifier(uri=uri) for uri in (markdown, setup, loop)
                ],
            )
        )
        assert await editor.diagnostics(loop, after=before) == ()

    asyncio.run(body())


def test_a_half_typed_cell_is_left_out_and_the_others_still_analysed(tmp_path: Path) -> None:
    @session(tmp_path)
    async def body(editor: Editor) -> None:
        _, loop, typing = _open_notebook(
            editor,
            [
                (types.NotebookCellKind.Code, SETUP),
                (types.NotebookCellKind.Code, LOOP),
                (types.NotebookCellKind.Code, "print(model(\n"),
            ],
        )
        (batch,) = await editor.diagnostics(loop, version=1)
        assert batch.code == "DVL301"
        assert await editor.diagnostics(typing, version=1) == ()  # no DVL001 while typing
        await editor.log_containing("nb.ipynb cell 3 not analysed: cannot parse cell 3")

    asyncio.run(body())


def test_hovering_a_finding_in_a_cell_explains_it(tmp_path: Path) -> None:
    @session(tmp_path)
    async def body(editor: Editor) -> None:
        setup, loop = _open_notebook(
            editor, [(types.NotebookCellKind.Code, SETUP), (types.NotebookCellKind.Code, LOOP)]
        )
        (batch,) = await editor.diagnostics(loop, version=1)
        hover = await editor.hover(loop, 2, 66)  # in `targets`
        assert hover is not None and hover.range == batch.range
        assert isinstance(hover.contents, types.MarkupContent)
        assert hover.contents.value.startswith("**DVL301 ")
        assert hover.contents.value.endswith(f"\n\n{batch.message}")
        assert await editor.hover(setup, 5, 10) is None  # the cell has no finding

    asyncio.run(body())
