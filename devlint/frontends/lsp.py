"""``devlint lsp``: diagnostics and quick fixes in the editor (pygls 2, stdio).

A thin adapter over ``devlint.running.engine.lint_report``:

- A document is linted when it is opened or saved, and ``debounceMs`` (200 by
  default) after the last change, one lint at a time. The next change replaces
  a lint that waits for the debounce or its turn: a superseded version is never
  linted, and the last one is linted once the lint running when the edits
  stopped has ended. Each result is published with the version it was computed
  for; a result for a version the user has since edited is dropped, a newer one
  is on its way.
- Memory stays flat however long the user types: the server keeps the report
  of each open document's last version (for its code actions) and lets older
  ones go; their cyclic garbage is collected once the server has linted as
  many lines as its project indexes hold (``lsp_garbage``).
- Half-typed code is the normal state of a buffer. When a version cannot be
  parsed (DVL001) or analysed (DVL003), nothing is published: the editor keeps
  the diagnostics of the last version that could be analysed (none, for a
  document that never could), and the reason goes to ``window/logMessage``.
  Nothing ever goes to stdout but the protocol: ``serve`` points
  ``sys.stdout`` at stderr before it starts.
- Settings come from the nearest ``pyproject.toml`` with ``[tool.devlint]``
  above each document, read again for every lint, so a saved change applies
  at the next lint. When the client reports a changed ``pyproject.toml``
  (``workspace/didChangeWatchedFiles``, registered dynamically when the
  client supports it) or saves one it syncs, every open document is linted
  again at once. An invalid configuration is reported once and the last
  valid one (or the defaults) stays in use.
- Positions: devlint's columns are code points; the client's are UTF-16
  units unless it negotiated another encoding, and pygls' codec converts.
- Each diagnostic has its rule's code and a ``codeDescription`` link to the
  rule's page (``devlint.rule_docs``; initialization option ``docsUrl``).
- Hovering over a finding shows its rule's code, name and summary with a link to
  its page, the message (which says where each value it names was made or
  moved) and links to the places in other files it rests on (``lsp_hover``);
  like code actions, only while the text is the version it was published for.
- Quick fixes are the rules' fixes (safe ones preferred, unsafe ones titled
  "(unsafe)"), and ``source.fixAll.devlint`` applies every safe fix that
  overlaps no other; they are offered only for the version the diagnostics
  were computed for, as versioned edits. Publishing builds no fix: a code
  action request builds those of the diagnostics it is about, once per
  version. The fix-all's edits are built when the user picks it
  (``codeAction/resolve``), or at once for clients that cannot resolve. A
  fix that fails to build is logged and not offered; the other fixes and the
  diagnostics are unaffected.
- The project: a document is analysed with the project modules it imports
  (``devlint.project.index``, one index per project for the session, each
  module read and run again only when it changes). Open documents count as
  their current, unsaved text. When a document changes (or closes), the open
  documents whose last lint read it are linted again after the debounce.
- Notebooks come through notebook document sync (``lsp_notebooks``): the
  notebook is linted as one program on open, save and after the debounce,
  each cell's diagnostics are published for its cell document, and quick
  fixes are offered there. A cell that cannot be parsed is left out (the
  reason is logged), as a half-typed file is.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path
from pygls.workspace import PositionCodec, TextDocument

from devlint import __version__
from devlint.config import DEFAULT_SETTINGS, ConfigError, Settings, load_settings
from devlint.diagnostic import Diagnostic, Severity, SuggestedFix
from devlint.frontends.lsp_garbage import GarbageCollection
from devlint.frontends.lsp_hover import hover_text
from devlint.frontends.lsp_notebooks import NOTEBOOK_SYNC, by_cell, notebook_of
from devlint.notebooks.linting import CellReport, notebook_report
from devlint.notebooks.reading import Notebook
from devlint.notices import INTERNAL_ERROR, PARSER_LIMITATION, SYNTAX_ERROR
from devlint.project.finder import Project
from devlint.project.index import FileImporter, ProjectIndex, index_of
from devlint.rule_docs import docs_url
from devlint.rules import all_rules
from devlint.running import gc_thresholds
from devlint.running.engine import LintReport, lint_report

SOURCE = "devlint"
DEFAULT_DEBOUNCE_MS = 200
PYTHON_SUFFIXES = (".py", ".pyi")
PYPROJECT = "pyproject.toml"
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.devlint"
FIX_ALL_TITLE = "devlint: fix all safely fixable problems"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
_UNANALYSED = (SYNTAX_ERROR, PARSER_LIMITATION, INTERNAL_ERROR)
_FIXABLE = frozenset(rule.meta.code for rule in all_rules() if rule.meta.fixable)
Report = TypeVar("Report")
_LINE_BREAK = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")
"""Where Python's tokenizer (and so LibCST) starts a new line; not ``str.splitlines``."""


@dataclass(frozen=True)
class Options:
    """``initializationOptions`` the server understands."""

    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    docs_url: str | None = None

    @classmethod
    def parse(cls, raw: Any) -> tuple[Options, list[str]]:
        """The options, and a complaint for each value that was ignored."""
        if not isinstance(raw, dict):
            return cls(), [] if raw is None else ["initializationOptions must be an object"]
        problems = []
        debounce = raw.get("debounceMs", DEFAULT_DEBOUNCE_MS)
        if isinstance(debounce, bool) or not isinstance(debounce, int) or debounce < 0:
            problems.append(f"debounceMs must be a whole number >= 0, got {debounce!r}")
            debounce = DEFAULT_DEBOUNCE_MS
        url = raw.get("docsUrl")
        if url is not None and not isinstance(url, str):
            problems.append(f"docsUrl must be a string, got {url!r}")
            url = None
        return cls(debounce, url), problems


@dataclass(frozen=True)
class QuickFix:
    """One fix as the client will apply it: edits in client units."""

    title: str
    edits: tuple[types.TextEdit, ...]
    safe: bool


@dataclass
class Published:
    """What was last published for a document, for code actions and hovers on that
    version: each diagnostic as sent and as linted, the report that builds their fixes,
    and what converts the fixes' positions to client units."""

    version: int | None
    entries: list[tuple[types.Diagnostic, Diagnostic]] = field(default_factory=list)
    report: LintReport | CellReport = field(default_factory=LintReport)
    lines: Sequence[str] = ()
    codec: PositionCodec = field(default_factory=PositionCodec)


class Protocol(LanguageServerProtocol):
    """pygls' protocol without its memory of the notifications it handled.

    pygls 2.1 files the future of each notification that one of its own handlers
    (``didOpen``, ``didChange``, …) takes under an id it makes up, and never removes it:
    about 2 KB per keystroke for the whole session. A request's future goes when it is
    answered; a notification's goes here, once its handler has finished (a cancelled
    one is left: pygls cancels them at shutdown, while it walks the table).
    """

    def _check_handler_result(self, future: Future[Any]) -> None:
        super()._check_handler_result(future)
        if future.cancelled():
            return
        table = self._request_futures
        for message in [message for message, filed in table.items() if filed is future]:
            del table[message]


class DevlintLanguageServer(LanguageServer):
    """The server and its per-session state."""

    def __init__(self) -> None:
        super().__init__(
            SOURCE, __version__, notebook_document_sync=NOTEBOOK_SYNC, protocol_cls=Protocol
        )
        self.options = Options()
        self.resolves_edits = False
        """Whether the client fills in an action's edit with ``codeAction/resolve``."""
        self.open_uris: set[str] = set()
        self.notebook_uris: set[str] = set()
        self.cell_uris: dict[str, set[str]] = {}
        """Per notebook, the cell documents it last published diagnostics for."""
        self.pending: dict[str, asyncio.Task[None]] = {}
        """Per document, its lint waiting for the debounce or its turn (``_lint_later``)."""
        self.published: dict[str, Published] = {}
        self.unanalysed: dict[str, str] = {}
        """Per document, why its current version was not analysed (logged once)."""
        self.good_settings: dict[str, Settings] = {}
        self.config_errors: dict[str, str] = {}
        self.uses: dict[str, set[str]] = {}
        """Per document, the project files its last lint read (what it imports)."""
        self.lint_turn = asyncio.Lock()
        """One lint at a time: lints share the project indexes."""
        self.indexes: dict[tuple[Path, Settings], ProjectIndex] = {}
        """The project indexes the session's lints used (they stay for the session)."""
        self.garbage = GarbageCollection()

    # messages to the client ------------------------------------------------

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """A line in the client's log (never stdout, never a popup)."""
        self.window_log_message(types.LogMessageParams(type=kind, message=f"devlint: {message}"))

    # settings ----------------------------------------------------------------

    def settings_for(self, path: str | None) -> Settings:
        """The settings of the ``pyproject.toml`` nearest ``path`` (read afresh each time)."""
        start = Path(path).parent if path else Path(self.workspace.root_path or ".")
        key = str(start)
        try:
            settings = load_settings(start)
        except ConfigError as error:
            message = str(error)
            if self.config_errors.get(key) != message:
                self.config_errors[key] = message
                self.log(
                    f"invalid configuration, keeping the last valid one: {message}",
                    types.MessageType.Error,
                )
                self.window_show_message(
                    types.ShowMessageParams(
                        type=types.MessageType.Warning, message=f"devlint: {message}"
                    )
                )
            return self.good_settings.get(key, DEFAULT_SETTINGS)
        if self.config_errors.pop(key, None) is not None:
            self.log(f"configuration for {key} is valid again")
        self.good_settings[key] = settings
        return settings

    def reload_settings(self, why: str) -> None:
        """A pyproject.toml changed: lint every open document again now."""
        self.log(f"{why}: linting {len(self.open_uris)} open document(s) again")
        for uri in sorted(self.open_uris | self.notebook_uris):
            self.schedule(uri, 0)

    # linting -----------------------------------------------------------------

    def schedule(self, uri: str, delay_ms: int) -> None:
        """Lint ``uri`` after ``delay_ms``, replacing a lint of it that has not started."""
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        task = asyncio.ensure_future(self._lint_later(uri, delay_ms / 1000))
        self.pending[uri] = task
        task.add_done_callback(lambda done: self._forget(uri, done))

    def _forget(self, uri: str, task: asyncio.Task[None]) -> None:
        if self.pending.get(uri) is task:
            del self.pending[uri]

    async def _lint_later(self, uri: str, delay: float) -> None:
        """Lint ``uri`` after ``delay``, once the lint before it has ended.

        Until its lint starts, the task is in ``pending``, where the next ``schedule``
        of the document cancels it: a superseded version is never linted. Once
        started, the lint runs to its end (its thread cannot be stopped, and the turn
        lasts as long as it does); its result is dropped if the document changed
        meanwhile, and the lint of the newer version waits its turn.
        """
        if delay:
            await asyncio.sleep(delay)
        async with self.lint_turn:
            self._forget(uri, asyncio.current_task())  # started: no newer change cancels it
            if uri in self.notebook_uris:
                linted = await self._lint_notebook_now(uri)
            elif uri in self.open_uris:
                linted = await self._lint_document_now(uri)
            else:
                return
            held = sum(index.lines_held for index in self.indexes.values())
            self.garbage.after_lint(linted, held)

    async def _lint_document_now(self, uri: str) -> int:
        """Lint a document's current text and publish its diagnostics, unless it changed
        meanwhile; the lines linted."""
        document = self.workspace.get_text_document(uri)
        version, source, path = document.version, document.source, _path_of(uri)
        try:
            settings = self.settings_for(path)
            buffers = self._open_buffers()
            # In a thread, so that the event loop keeps reading messages meanwhile.
            report, uses = await asyncio.to_thread(self._lint, source, path, uri, settings, buffers)
            if (
                uri in self.open_uris and self.workspace.get_text_document(uri).version == version
            ):  # otherwise edited meanwhile: the newer version waits its turn
                self.uses[uri] = uses
                self.publish(uri, version, source, document.position_codec, report)
        except Exception as error:  # a bug must cost one lint, never the session
            traceback.print_exc(file=sys.stderr)
            self.log(
                f"internal error on {path or uri}: {type(error).__name__}: {error}",
                types.MessageType.Error,
            )
        return _line_count(source)

    def _lint(
        self, source: str, path: str | None, uri: str, settings: Settings, buffers: dict[Path, str]
    ) -> tuple[LintReport, set[str]]:
        """Lint one document in view of its project, whose open documents count as their
        current text; and the project files the lint read."""

        def lint(name: str, importer: FileImporter | None) -> LintReport:
            return lint_report(source, name, settings, importer=importer)

        return self._in_project(path, uri, settings, buffers, lint)

    def _in_project(
        self,
        path: str | None,
        uri: str,
        settings: Settings,
        buffers: dict[Path, str],
        lint: Callable[[str, FileImporter | None], Report],
    ) -> tuple[Report, set[str]]:
        """``lint(name, importer)`` with the importer of the document's project (none for an
        untitled buffer); and the project files it read. Runs in a thread, in the
        lint's turn: the project indexes serve one lint at a time."""
        if path is None:  # an unsaved, untitled buffer: no project
            return lint(uri, None), set()
        index = index_of(Project.of(Path(path)), settings, let_others_go=False)
        self.indexes[(index.project.root, settings)] = index
        index.set_texts(buffers)
        importer = index.importer_for(Path(path))
        report = lint(path, importer)
        return report, {str(used) for used, _ in importer.uses()}

    async def _lint_notebook_now(self, uri: str) -> int:
        """Lint a notebook from its cells' current text and publish each cell's diagnostics,
        unless it changed meanwhile; the lines linted."""
        document = self.workspace.get_notebook_document(notebook_uri=uri)
        if document is None:
            return 0
        cells = [(cell, self.workspace.get_text_document(cell.document)) for cell in document.cells]
        notebook = notebook_of([(cell, text.source) for cell, text in cells])
        path = _path_of(uri)
        try:
            settings, buffers = self.settings_for(path), self._open_buffers()
            report, uses = await asyncio.to_thread(
                self._lint_notebook, notebook, path, uri, settings, buffers
            )
            current = self.workspace.get_notebook_document(notebook_uri=uri)
            if (
                uri in self.notebook_uris
                and current is not None
                and current.version == document.version
            ):  # otherwise edited meanwhile: the newer version waits its turn
                self.uses[uri] = uses
                self.publish_cells(uri, cells, report)
        except Exception as error:  # a bug must cost one lint, never the session
            traceback.print_exc(file=sys.stderr)
            self.log(f"internal error on {path or uri}: {type(error).__name__}: {error}")
        return sum(_line_count(cell.source) for cell in notebook.code_cells)

    def _lint_notebook(
        self,
        notebook: Notebook,
        path: str | None,
        uri: str,
        settings: Settings,
        buffers: dict[Path, str],
    ) -> tuple[CellReport, set[str]]:
        """``_lint`` for a notebook."""

        def lint(name: str, importer: FileImporter | None) -> CellReport:
            return notebook_report(notebook, name, settings, importer=importer)

        return self._in_project(path, uri, settings, buffers, lint)

    def publish_cells(
        self, uri: str, cells: list[tuple[types.NotebookCell, TextDocument]], report: CellReport
    ) -> None:
        """Each code cell's diagnostics for its cell document; the reasons a cell or the
        notebook was not analysed go to the log."""
        found = by_cell(report.diagnostics)
        for diagnostic in found.pop(None, []) + [
            d for ds in found.values() for d in ds if d.code in _UNANALYSED
        ]:
            where = f" cell {diagnostic.cell}" if diagnostic.cell else ""
            self.log(f"{_name_of(uri)}{where} not analysed: {diagnostic.message}")
        published: set[str] = set()
        template = self.options.docs_url
        for number, (cell, text) in enumerate(cells, 1):
            if cell.kind != types.NotebookCellKind.Code:
                continue
            kept = [d for d in found.get(number, []) if d.code not in _UNANALYSED]
            lines = _LINE_BREAK.split(text.source)
            codec = text.position_codec
            entries = [(to_lsp_diagnostic(d, lines, codec, template), d) for d in kept]
            self.published[cell.document] = Published(text.version, entries, report, lines, codec)
            self._send(cell.document, text.version, [entry[0] for entry in entries])
            published.add(cell.document)
        for gone in self.cell_uris.get(uri, set()) - published:  # cells deleted since
            self.published.pop(gone, None)
            self._send(gone, None, [])
        self.cell_uris[uri] = published

    def close_notebook(self, uri: str) -> None:
        self.notebook_uris.discard(uri)
        self.uses.pop(uri, None)
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        for cell in self.cell_uris.pop(uri, set()):
            if self.published.pop(cell, None) is not None:
                self._send(cell, None, [])

    def _open_buffers(self) -> dict[Path, str]:
        """The current text of every open document that is a file."""
        buffers = {}
        for uri in self.open_uris:
            path = _path_of(uri)
            if path is not None:
                buffers[Path(path)] = self.workspace.get_text_document(uri).source
        return buffers

    def relint_importers(self, uri: str) -> None:
        """``uri`` changed: lint again the open documents whose last lint read it."""
        path = _path_of(uri)
        if path is None:
            return
        for other in sorted(self.open_uris | self.notebook_uris):
            if other != uri and path in self.uses.get(other, ()):
                self.schedule(other, self.options.debounce_ms)

    def publish(
        self,
        uri: str,
        version: int | None,
        source: str,
        codec: PositionCodec,
        report: LintReport,
    ) -> None:
        """Publish the report's diagnostics for this version, unless it could not be analysed.

        Builds no fix: ``code_actions`` builds those it needs from the report.
        """
        unanalysed = next((d for d in report.diagnostics if d.code in _UNANALYSED), None)
        if unanalysed is not None:
            reason = f"line {unanalysed.line}: {unanalysed.message}"
            if self.unanalysed.get(uri) != reason:
                self.unanalysed[uri] = reason
                kept = "keeping the last diagnostics" if uri in self.published else "none shown"
                self.log(f"{_name_of(uri)} version {version} not analysed ({kept}): {reason}")
            if uri not in self.published:
                self.published[uri] = Published(version)
                self._send(uri, version, [])
            return
        if self.unanalysed.pop(uri, None) is not None:
            self.log(f"{_name_of(uri)} version {version} analysed again")
        lines = _LINE_BREAK.split(source)
        template = self.options.docs_url
        entries = [(to_lsp_diagnostic(d, lines, codec, template), d) for d in report.diagnostics]
        self.published[uri] = Published(version, entries, report, lines, codec)
        self._send(uri, version, [entry[0] for entry in entries])

    def _send(self, uri: str, version: int | None, diagnostics: list[types.Diagnostic]) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    def close(self, uri: str) -> None:
        self.open_uris.discard(uri)
        self.uses.pop(uri, None)
        self.relint_importers(uri)  # they see the file on disk again
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.unanalysed.pop(uri, None)
        if self.published.pop(uri, None) is not None:
            self._send(uri, None, [])

    # hover -------------------------------------------------------------------

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        """The findings whose range holds the position, with their rule and where their
        values came from (``lsp_hover``); None elsewhere, and on changed text."""
        published = self._published_now(params.text_document.uri)
        if published is None:
            return None
        found = [entry for entry in published.entries if _holds(entry[0].range, params.position)]
        if not found:
            return None
        markdown = _hover_in_markdown(self.client_capabilities)
        text = hover_text(
            [
                (linted, sent.code_description.href if sent.code_description else "")
                for sent, linted in found
            ],
            self.workspace.root_path,
            markdown,
        )
        kind = types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText
        return types.Hover(
            contents=types.MarkupContent(kind=kind, value=text), range=found[0][0].range
        )

    # code actions ------------------------------------------------------------

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """Quick fixes for the devlint diagnostics in the request's context, and a fix-all.

        Safe fixes are preferred (an editor may apply them on its own);
        unsafe ones are offered too, titled "(unsafe)": the user picks them.
        """
        uri = params.text_document.uri
        published = self._published_now(uri)
        if published is None:
            return []
        identifier = types.OptionalVersionedTextDocumentIdentifier(
            uri=uri, version=published.version
        )
        only = params.context.only
        actions = []
        if _wants(only, types.CodeActionKind.QuickFix):
            wanted = {
                (d.code, _range_key(d.range))
                for d in params.context.diagnostics
                if d.source == SOURCE
            }
            asked = [
                entry
                for entry in published.entries
                if (entry[0].code, _range_key(entry[0].range)) in wanted
            ]
            for diagnostic, fix in self._quick_fixes(uri, published, asked):
                actions.append(
                    types.CodeAction(
                        title=fix.title if fix.safe else f"{fix.title} (unsafe)",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic],
                        is_preferred=fix.safe,
                        edit=_workspace_edit(identifier, fix.edits),
                    )
                )
        if _wants(only, FIX_ALL_KIND):
            fix_all = self._fix_all(uri, published, identifier)
            if fix_all is not None:
                actions.append(fix_all)
        return actions

    def _fix_all(
        self,
        uri: str,
        published: Published,
        identifier: types.OptionalVersionedTextDocumentIdentifier,
    ) -> types.CodeAction | None:
        """The fix-all action, if there may be something to fix.

        A client that resolves actions gets it without its edits, which are
        built only if the user picks it (``codeAction/resolve``): editors ask for
        code actions whenever the cursor rests on a diagnostic, and building
        every fix of a file costs more than linting it.
        """
        if self.resolves_edits:
            if not any(diagnostic.code in _FIXABLE for _, diagnostic in published.entries):
                return None
            return types.CodeAction(
                title=FIX_ALL_TITLE,
                kind=FIX_ALL_KIND,
                data={"uri": uri, "version": published.version},
            )
        edit = self._fix_all_edit(uri, published, identifier)
        return types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL_KIND, edit=edit) if edit else None

    def _fix_all_edit(
        self,
        uri: str,
        published: Published,
        identifier: types.OptionalVersionedTextDocumentIdentifier,
    ) -> types.WorkspaceEdit | None:
        """Every safe fix that overlaps no other, as one edit; None if there is none."""
        fixes = self._quick_fixes(uri, published, published.entries)
        safe = [fix for _, fix in fixes if fix.safe]
        return _workspace_edit(identifier, _disjoint_edits(safe)) if safe else None

    def resolve_code_action(self, action: types.CodeAction) -> types.CodeAction:
        """The fix-all's edits, built now, if its document is still at the version it was
        offered for; otherwise the action comes back without edits and does nothing."""
        data = action.data if isinstance(action.data, dict) else {}
        uri = data.get("uri")
        published = self.published.get(uri) if isinstance(uri, str) else None
        if (
            action.kind != FIX_ALL_KIND
            or published is None
            or published.version != data.get("version")
            or not self._is_open(uri)
            or self.workspace.get_text_document(uri).version != published.version
        ):
            return action
        identifier = types.OptionalVersionedTextDocumentIdentifier(
            uri=uri, version=published.version
        )
        action.edit = self._fix_all_edit(uri, published, identifier) or _workspace_edit(
            identifier, []
        )
        return action

    def _published_now(self, uri: str) -> Published | None:
        """What was published for an open document, if it was for its current text: the
        diagnostics of text that has changed since may no longer be where they say."""
        published = self.published.get(uri)
        if published is None or not self._is_open(uri):
            return None
        if self.workspace.get_text_document(uri).version != published.version:
            return None
        return published

    def _is_open(self, uri: str) -> bool:
        """Whether ``uri`` is an open document or a cell of an open notebook."""
        return uri in self.open_uris or any(uri in cells for cells in self.cell_uris.values())

    def _quick_fixes(
        self, uri: str, published: Published, entries: Sequence[tuple[types.Diagnostic, Diagnostic]]
    ) -> list[tuple[types.Diagnostic, QuickFix]]:
        """The fixes of ``entries`` that exist, built now (once per version).

        A fix that fails to build is logged and left out: a bug in one rule's fix
        must cost that fix, not the others or the request.
        """
        fixes = []
        for sent, diagnostic in entries:
            try:
                fix = published.report.fix_for(diagnostic)
            except Exception as error:  # any bug: see above
                traceback.print_exc(file=sys.stderr)
                self.log(
                    f"internal error building the fix of {diagnostic.code} at "
                    f"{_name_of(uri)}:{diagnostic.line}: {type(error).__name__}: {error}",
                    types.MessageType.Error,
                )
                continue
            if fix is not None:
                fixes.append((sent, _quick_fix(fix, published.lines, published.codec)))
        return fixes


def _hover_in_markdown(capabilities: types.ClientCapabilities) -> bool:
    """Whether the client shows Markdown in hovers (the formats it lists, or any)."""
    document = capabilities.text_document
    hover = document.hover if document else None
    formats = hover.content_format if hover else None
    return not formats or types.MarkupKind.Markdown in formats


def _holds(rng: types.Range, position: types.Position) -> bool:
    """Whether ``position`` is on a character of ``rng`` (or on an empty range's place)."""
    start = (rng.start.line, rng.start.character)
    end = (rng.end.line, rng.end.character)
    at = (position.line, position.character)
    return start <= at < end or start == at == end


def _resolves_edits(capabilities: types.ClientCapabilities) -> bool:
    """Whether the client says it fills in an action's edit with ``codeAction/resolve``."""
    document = capabilities.text_document
    actions = document.code_action if document else None
    support = actions.resolve_support if actions else None
    return support is not None and "edit" in support.properties


def _wants(only: Sequence[str] | None, kind: str) -> bool:
    """Whether a request restricted to the kinds ``only`` accepts ``kind``."""
    return only is None or any(kind == want or kind.startswith(f"{want}.") for want in only)


def _range_key(rng: types.Range) -> tuple[int, int, int, int]:
    return (rng.start.line, rng.start.character, rng.end.line, rng.end.character)


def _workspace_edit(
    document: types.OptionalVersionedTextDocumentIdentifier, edits: Sequence[types.TextEdit]
) -> types.WorkspaceEdit:
    """Edits that a client applies only to the version they were computed for."""
    return types.WorkspaceEdit(
        document_changes=[types.TextDocumentEdit(text_document=document, edits=list(edits))]
    )


def _path_of(uri: str) -> str | None:
    """The file system path of a ``file:`` URI; None for ``untitled:`` and the like."""
    return to_fs_path(uri) if uri.startswith("file:") else None


def _line_count(source: str) -> int:
    return source.count("\n") + 1


def _name_of(uri: str) -> str:
    path = _path_of(uri)
    return Path(path).name if path else uri


def _is_python(uri: str, language_id: str | None = None) -> bool:
    return language_id == "python" or uri.endswith(PYTHON_SUFFIXES)


def client_position(
    lines: Sequence[str], codec: PositionCodec, line: int, column: int
) -> types.Position:
    """devlint's (1-based line, code-point column) as an LSP position in client units."""
    index = line - 1
    if index >= len(lines):
        return types.Position(line=max(len(lines) - 1, 0), character=0)
    text = lines[index].rstrip("\r\n")
    return types.Position(line=index, character=codec.client_num_units(text[:column]))


def to_lsp_diagnostic(
    diagnostic: Diagnostic, lines: Sequence[str], codec: PositionCodec, template: str | None
) -> types.Diagnostic:
    """The LSP form of a devlint diagnostic."""
    return types.Diagnostic(
        range=types.Range(
            start=client_position(lines, codec, diagnostic.line, diagnostic.column),
            end=client_position(lines, codec, diagnostic.end_line, diagnostic.end_column),
        ),
        message=diagnostic.message,
        severity=_SEVERITY[diagnostic.severity],
        code=diagnostic.code,
        code_description=types.CodeDescription(href=docs_url(diagnostic.code, template)),
        source=SOURCE,
    )


def _quick_fix(fix: SuggestedFix, lines: Sequence[str], codec: PositionCodec) -> QuickFix:
    """A rule's fix as edits in client units."""
    edits = tuple(
        types.TextEdit(
            range=types.Range(
                start=client_position(lines, codec, edit.line, edit.column),
                end=client_position(lines, codec, edit.end_line, edit.end_column),
            ),
            new_text=edit.text,
        )
        for edit in fix.edits
    )
    return QuickFix(fix.title, edits, fix.safe)


def _disjoint_edits(fixes: Sequence[QuickFix]) -> list[types.TextEdit]:
    """The edits of every fix that overlaps none taken before it (LSP forbids overlaps)."""
    taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
    edits = []
    for fix in fixes:
        spans = [
            (
                (e.range.start.line, e.range.start.character),
                (e.range.end.line, e.range.end.character),
            )
            for e in fix.edits
        ]
        if any(
            (start < other_end and other_start < end) or start == other_start
            for start, end in spans
            for other_start, other_end in taken
        ):
            continue
        taken.extend(spans)
        edits.extend(fix.edits)
    return edits


def create_server() -> DevlintLanguageServer:
    """A server with every feature registered."""
    server = DevlintLanguageServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: DevlintLanguageServer, params: types.InitializeParams) -> None:
        ls.options, problems = Options.parse(params.initialization_options)
        ls.resolves_edits = _resolves_edits(params.capabilities)
        for problem in problems:
            ls.log(f"ignoring an initialization option: {problem}", types.MessageType.Warning)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: DevlintLanguageServer, params: types.InitializedParams) -> None:
        capabilities = ls.client_capabilities.workspace
        watched = capabilities.did_change_watched_files if capabilities else None
        if not (watched and watched.dynamic_registration):
            return  # the client does not watch files for us: didSave of pyproject.toml still works
        registration = types.Registration(
            id="devlint-pyproject",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern=f"**/{PYPROJECT}")]
            ),
        )
        try:
            await ls.client_register_capability_async(
                types.RegistrationParams(registrations=[registration])
            )
        except Exception as error:
            ls.log(f"cannot watch {PYPROJECT} files: {error}", types.MessageType.Warning)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DevlintLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        if _is_python(document.uri, document.language_id):
            ls.open_uris.add(document.uri)
            ls.schedule(document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DevlintLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        if params.text_document.uri in ls.open_uris:
            ls.schedule(params.text_document.uri, ls.options.debounce_ms)
            ls.relint_importers(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: DevlintLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri.endswith(f"/{PYPROJECT}"):
            ls.reload_settings(f"{PYPROJECT} saved")
        elif uri in ls.open_uris:
            ls.schedule(uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DevlintLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def did_open_notebook(
        ls: DevlintLanguageServer, params: types.DidOpenNotebookDocumentParams
    ) -> None:
        ls.notebook_uris.add(params.notebook_document.uri)
        ls.schedule(params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def did_change_notebook(
        ls: DevlintLanguageServer, params: types.DidChangeNotebookDocumentParams
    ) -> None:
        if params.notebook_document.uri in ls.notebook_uris:
            ls.schedule(params.notebook_document.uri, ls.options.debounce_ms)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def did_save_notebook(
        ls: DevlintLanguageServer, params: types.DidSaveNotebookDocumentParams
    ) -> None:
        if params.notebook_document.uri in ls.notebook_uris:
            ls.schedule(params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def did_close_notebook(
        ls: DevlintLanguageServer, params: types.DidCloseNotebookDocumentParams
    ) -> None:
        ls.close_notebook(params.notebook_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(
        ls: DevlintLanguageServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        if any(change.uri.endswith(f"/{PYPROJECT}") for change in params.changes):
            ls.reload_settings(f"{PYPROJECT} changed")

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=True
        ),
    )
    def code_action(
        ls: DevlintLanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        try:
            return ls.code_actions(params)
        except Exception as error:  # never fail a request the user did not ask for explicitly
            traceback.print_exc(file=sys.stderr)
            ls.log(f"internal error in code actions: {error}", types.MessageType.Error)
            return []

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: DevlintLanguageServer, params: types.HoverParams) -> types.Hover | None:
        try:
            return ls.hover(params)
        except Exception as error:  # a hover must never fail: there is simply none
            traceback.print_exc(file=sys.stderr)
            ls.log(f"internal error in hover: {error}", types.MessageType.Error)
            return None

    @server.feature(types.CODE_ACTION_RESOLVE)
    def resolve_code_action(
        ls: DevlintLanguageServer, action: types.CodeAction
    ) -> types.CodeAction:
        try:
            return ls.resolve_code_action(action)
        except Exception as error:  # the action comes back without edits: it does nothing
            traceback.print_exc(file=sys.stderr)
            ls.log(f"internal error resolving a code action: {error}", types.MessageType.Error)
            return action

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: DevlintLanguageServer, params: None) -> None:
        for task in ls.pending.values():
            task.cancel()

    return server


def serve() -> int:
    """Run the server on stdin/stdout until the client says exit."""
    gc_thresholds.for_whole_process()  # this process only lints, and holds the workspace's trees
    server = create_server()
    gc.freeze()  # what it loaded to start lives as long as it: full collections skip it
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print() must never corrupt the protocol stream
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="devlint lsp %(levelname)s: %(message)s"
    )
    server.start_io(stdin, stdout)
    return 0
