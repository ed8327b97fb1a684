"""``devlint lsp`` end to end: a real pygls client talks to the server over stdio."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import os
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path
from pygls.workspace import PositionCodec
from recorded_lsp import GATE_ENV, LOG_ENV, records, versioned
from snippets import MIXED

from devlint.diagnostic import Diagnostic, Severity
from devlint.frontends.lsp import Options, to_lsp_diagnostic
from devlint.frontends.lsp_garbage import FLOOR_LINES, GarbageCollection
from devlint.frontends.lsp_hover import hover_text

TIMEOUT = 30.0
DEVLINT_LSP = ("-m", "devlint", "lsp")
RECORDED_LSP = ("-m", "recorded_lsp")
"""The server with its lints recorded (``tests/recorded_lsp.py``)."""
MIXED_RANGE = ((6, 11), (6, 16))  # `a + b`, 0-based line and UTF-16 character
CLEAN = MIXED.replace("torch.ones(3)", 'torch.ones(3, device="cuda")')
DISCARDED = """\
import torch

x = torch.ones(3)
x.to("cuda")
"""
HALF_TYPED = MIXED.replace("    return a + b", "    return a + (b")
EMOJI_LINE = '    label = "héllo 😀"; c = a + b\n'
"""`a + b` starts at code point 27 and UTF-16 unit 28: the emoji is two units."""


class Editor:
    """A language client as an editor drives it, recording what the server sends."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.client = LanguageClient("devlint-tests", "1")
        self.published: list[types.PublishDiagnosticsParams] = []
        self.logs: list[types.LogMessageParams] = []
        self.shown: list[types.ShowMessageParams] = []
        self.registrations: list[types.Registration] = []
        self._arrived = asyncio.Event()
        self.versions: dict[str, int] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams) -> None:
            self.published.append(params)
            self._arrived.set()

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams) -> None:
            self.logs.append(params)
            self._arrived.set()

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_show(params: types.ShowMessageParams) -> None:
            self.shown.append(params)

        @self.client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def on_register(params: types.RegistrationParams) -> None:
            self.registrations.extend(params.registrations)
            self._arrived.set()

    async def start(
        self,
        options: dict[str, Any] | None = None,
        resolves: bool = False,
        server: Sequence[str] = DEVLINT_LSP,
        env: dict[str, str] | None = None,
    ) -> types.InitializeResult:
        """Start the server (``server``: its arguments to Python, and ``env`` added to the
        environment); ``resolves``: say the client fills in edits with codeAction/resolve."""
        environment = {**os.environ, **env} if env else None
        await self.client.start_io(sys.executable, *server, cwd=self.root, env=environment)
        capabilities = types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(
                did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                    dynamic_registration=True
                )
            ),
            text_document=types.TextDocumentClientCapabilities(
                publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                    version_support=True, code_description_support=True
                ),
                code_action=types.CodeActionClientCapabilities(
                    data_support=resolves,
                    resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"])
                    if resolves
                    else None,
                ),
            ),
        )
        result = await self.client.initialize_async(
            types.InitializeParams(
                capabilities=capabilities,
                root_uri=from_fs_path(str(self.root)),
                initialization_options=options,
            )
        )
        self.client.initialized(types.InitializedParams())
        return result

    async def stop(self) -> int | None:
        await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
        self.client.exit(None)
        server = self.client._server
        assert server is not None
        returncode = await asyncio.wait_for(server.wait(), TIMEOUT)
        await self.client.stop()
        return returncode

    def uri(self, name: str) -> str:
        return from_fs_path(str(self.root / name))

    def open(self, name: str, text: str) -> str:
        uri = self.uri(name)
        self.versions[uri] = 1
        (self.root / name).write_text(text, encoding="utf-8")
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )
        return uri

    def replace_all(self, uri: str, text: str) -> int:
        """didChange with the whole new text; returns the new version."""
        self.versions[uri] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=self.versions[uri]
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return self.versions[uri]

    def edit(self, uri: str, line: int, start: int, end: int, text: str) -> int:
        """An incremental didChange of one line's characters; returns the new version."""
        self.versions[uri] += 1
        rng = types.Range(types.Position(line, start), types.Position(line, end))
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=self.versions[uri]
                ),
                content_changes=[types.TextDocumentContentChangePartial(range=rng, text=text)],
            )
        )
        return self.versions[uri]

    def save(self, uri: str) -> None:
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
        )

    async def until(
        self, found: Callable[[], Any], timeout: float = TIMEOUT, poll: bool = False
    ) -> Any:
        """Wait until ``found()`` returns something truthy, and return it; ``poll``: look
        every 10 ms (for what the server does not send, e.g. a file it writes)."""
        deadline = time.monotonic() + timeout
        while not (result := found()):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"timed out; published: {self.published}; "
                    f"logs: {[log.message for log in self.logs]}"
                )
            self._arrived.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(
                    self._arrived.wait(), min(remaining, 0.01 if poll else remaining)
                )
        return result

    async def diagnostics(
        self, uri: str, version: int | None = None, after: int = 0
    ) -> tuple[types.Diagnostic, ...]:
        """The first publication for ``uri`` (and ``version``) among those from index ``after``."""

        def found() -> types.PublishDiagnosticsParams | None:
            return next(
                (
                    p
                    for p in self.published[after:]
                    if p.uri == uri and (version is None or p.version == version)
                ),
                None,
            )

        return (await self.until(found)).diagnostics

    async def code_actions(
        self, uri: str, diagnostic: types.Diagnostic, only: list[str] | None = None
    ) -> tuple[types.CodeAction, ...]:
        result = await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=diagnostic.range,
                context=types.CodeActionContext(diagnostics=[diagnostic], only=only),
            )
        )
        return tuple(result or ())  # arrays arrive as tuples

    async def hover(self, uri: str, line: int, character: int) -> types.Hover | None:
        return await self.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line, character),
            )
        )

    async def log_containing(self, text: str, after: int = 0) -> str:
        def found() -> str | None:
            return next((log.message for log in self.logs[after:] if text in log.message), None)

        return await self.until(found)


def session(
    root: Path,
    options: dict[str, Any] | None = None,
    resolves: bool = False,
    server: Sequence[str] = DEVLINT_LSP,
    env: dict[str, str] | None = None,
) -> Callable[
    [Callable[[Editor], Coroutine[Any, Any, None]]], Callable[[], Coroutine[Any, Any, None]]
]:
    """Run a test body against a started server, then check it shuts down cleanly."""

    def decorate(body: Callable[[Editor], Coroutine[Any, Any, None]]):
        async def run() -> None:
            editor = Editor(root)
            await editor.start(options, resolves, server, env)
            try:
                await body(editor)
            finally:
                returncode = await editor.stop()
            assert returncode == 0

        return run

    return decorate


def apply(text: str, action: types.CodeAction) -> str:
    """The text after the action's edits, positions in UTF-16 units as the client counts."""
    assert action.edit is not None and action.edit.document_changes is not None
    (change,) = action.edit.document_changes
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        line = lines[position.line]
        units = 0
        for index, char in enumerate(line):
            if units >= position.character:
                return sum(map(len, lines[: position.line])) + index
            units += 2 if ord(char) > 0xFFFF else 1
        return sum(map(len, lines[: position.line])) + len(line)

    for edit in sorted(change.edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def codes(diagnostics: tuple[types.Diagnostic, ...]) -> list[str]:
    return [str(d.code) for d in diagnostics]


def position(rng: types.Range) -> tuple[tuple[int, int], tuple[int, int]]:
    return ((rng.start.line, rng.start.character), (rng.end.line, rng.end.character))


def test_open_change_save_code_action_and_shutdown(tmp_path: Path) -> None:
    @session(tmp_path)
    async def body(editor: Editor) -> None:
        uri = editor.open("train.py", MIXED)
        (mixed,) = await editor.diagnostics(uri, version=1)
        assert mixed.code == "DVL101"
        assert mixed.source == "devlint"
        assert mixed.severity == types.DiagnosticSeverity.Error
        assert position(mixed.range) == MIXED_RANGE
        assert "`a` is on cuda" in mixed.message
        assert mixed.code_description is not None
        assert mixed.code_description.href.endswith("/docs/rules/DVL101.md")

        version = editor.replace_all(uri, CLEAN)
        assert await editor.diagnostics(uri, version=version) == ()

        version = editor.replace_all(uri, DISCARDED)
        (discarded,) = await editor.diagnostics(uri, version=version)
        assert discarded.code == "DVL201"
        assert discarded.severity == types.DiagnosticSeverity.Warning

        before = len(editor.published)
        editor.save(uri)
        (saved,) = await editor.diagnostics(uri, version=version, after=before)
        assert saved == discarded

        (action,) = await editor.code_actions(uri, discarded, only=["quickfix"])
        assert action.kind == types.CodeActionKind.QuickFix
        assert action.title == "Assign the result to `x`"
        assert action.is_preferred
        assert action.diagnostics == (discarded,)
        assert apply(DISCARDED, action) == DISCARDED.replace('x.to("cuda")', 'x = x.to("cuda")')

        before = len(editor.published)
        editor.client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
        )
        assert await editor.diagnostics(uri, after=before) == ()

    asyncio.run(body())


def test_positions_are_utf16_code_units(tmp_path: Path) -> None:
    text = MIXED.replace("    return a + b\n", EMOJI_LINE + "    return c\n")
    assert EMOJI_LINE.index("a + b") == 27
    assert len(EMOJI_LINE[:27].encode("utf-16-le")) // 2 == 28

    @session(tmp_path)
    async def body(editor: Editor) -> None:
        uri = editor.open("emoji.py", text)
        (diagnostic,) = await editor.diagnostics(uri, version=1)
        assert diagnostic.code == "DVL101"
        assert position(diagnostic.range) == ((6, 28), (6, 33))

    asyncio.run(body())


def test_incremental_edits_use_utf16_positions_too(tmp_path: Path) -> None:
    text = MIXED.replace("    return a + b\n", EMOJI_LINE + "    return c\n")

    @session(tmp_path)
    async def body(editor: Editor) -> None:
        uri = editor.open("emoji.py", text)
        await editor.diagnostics(uri, version=1)
        # Replace `a` (UTF-16 28..29) by `a.cpu()`: both sides on the CPU now.
        version = editor.edit(uri, 6, 28, 29, "a.cpu()")
        assert await editor.diagnostics(uri, version=version) == ()

    asyncio.run(body())


def test_quick_fixes_and_fix_all_use_utf16_and_the_current_version(tmp_path: Path) -> None:
    text = DISCARDED.replace(
        'x.to("cuda")', 'label = "é😀"; x.to("cuda")\ny = torch.ones(2)\ny.cuda()'
    )

    @session(tmp_path, {"debounceMs": 5000})
    async def body(editor: Editor) -> None:
        uri = editor.open("fixes.py", text)
        first, second = await editor.diagnostics(uri, version=1)
        assert (first.code, second.code) == ("DVL201", "DVL201")
        assert first.range.start.character == len('label = "é😀"; ') + 1  # UTF-16

        (fix,) = await editor.code_actions(uri, first, only=["quickfix"])
        assert apply(text, fix) == text.replace('x.to("cuda")', 'x = x.to("cuda")')

        (fix_all,) = await editor.code_actions(uri, first, only=["source.fixAll"])
        assert fix_all.kind == "source.fixAll.devlint"
        fixed = text.replace('x.to("cuda")', 'x = x.to("cuda")').replace("y.cuda()", "y = y.cuda()")
        assert apply(text, fix_all) == fixed

        everything = await editor.code_actions(uri, first)
        assert {action.kind for action in everything} == {"quickfix", "source.fixAll.devlint"}

        editor.replace_all(uri, text + "\n")  # linted only after 5 s
        assert await editor.code_actions(uri, first) == ()  # no fixes for stale text

    asyncio.run(body())


def test_a_client_that_resolves_gets_the_fix_all_edits_when_it_picks_it(tmp_path: Path) -> None:
    text = DISCARDED.replace('x.to("cuda")', 'x.to("cuda")\ny = torch.ones(2)\ny.cuda()')
    fixed = text.replace('x.to("cuda")', 'x = x.to("cuda")').replace("y.cuda()", "y = y.cuda()")

    @session(tmp_path, {"debounceMs": 5000}, resolves=True)
    async def body(editor: Editor) -> None:
        uri = editor.open("fixes.py", text)
        first, _ = await editor.diagnostics(uri, version=1)
        quick_fix, fix_all = await editor.code_actions(uri, first)
        assert quick_fix.kind == "quickfix" and quick_fix.edit is not None
        assert fix_all.kind == "source.fixAll.devlint"
        assert fix_all.edit is None and fix_all.data is not None

        resolved = await editor.client.code_action_resolve_async(fix_all)
        assert apply(text, resolved) == fixed

        editor.replace_all(uri, text + "\n")  # linted only after 5 s
        stale = await editor.client.code_action_resolve_async(fix_all)
        assert stale.edit is None  # edits for the old text would corrupt the new one

    asyncio.run(body())


def test_half_typed_code_keeps_the_last_diagnostics_and_says_why(tmp_path: Path) -> None:
    @session(tmp_path)
    async def body(editor: Editor) -> None:
        uri = editor.open("train.py", MIXED)
        assert codes(await editor.diagnostics(uri, version=1)) == ["DVL101"]

        published = len(editor.published)
        broken = editor.replace_all(uri, HALF_TYPED)
        message = await editor.log_containing(f"version {broken} not analysed")
        assert "keeping the last diagnostics" in message
        assert "cannot parse" in message
        assert len(editor.published) == published  # the editor still shows `mixed`

        repaired = editor.replace_all(uri, MIXED.replace("a + b", "a + b + b"))
        (again,) = await editor.diagnostics(uri, version=repaired)
        assert again.code == "DVL101"
        await editor.log_containing(f"version {repaired} analysed again")

        never_parsed = editor.open("draft.py", HALF_TYPED)
        assert await editor.diagnostics(never_parsed, version=1) == ()
        assert "none shown" in await editor.log_containing("draft.py version 1 not analysed")

    asyncio.run(body())


def test_every_prefix_of_a_file_is_survived(tmp_path: Path) -> None:
    """Typing a file from the start: most versions are broken, the server keeps going."""
    text = MIXED + DISCARDED.replace("import torch\n", "")

    @session(tmp_path, {"debounceMs": 0})
    async def body(editor: Editor) -> None:
        uri = editor.open("typed.py", "")
        for end in range(0, len(text), 3):
            editor.replace_all(uri, text[:end])
        version = editor.replace_all(uri, text)
        assert codes(await editor.diagnostics(uri, version=version)) == ["DVL101", "DVL201"]
        assert not any(log.type == types.MessageType.Error for log in editor.logs)

    asyncio.run(body())


def test_changes_are_debounced_to_the_last_version(tmp_path: Path) -> None:
    @session(tmp_path, {"debounceMs": 300})
    async def body(editor: Editor) -> None:
        uri = editor.open("train.py", MIXED)
        await editor.diagnostics(uri, version=1)
        before = len(editor.published)
        for _ in range(5):
            version = editor.replace_all(uri, CLEAN)
        assert await editor.diagnostics(uri, after=before) == ()
        await asyncio.sleep(0.5)
        assert [p.version for p in editor.published[before:]] == [version]

    asyncio.run(body())


def test_pyproject_changes_are_picked_up_and_bad_ones_reported(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.devlint]\nignore = ["DVL2"]\n')

    @session(tmp_path)
    async def body(editor: Editor) -> None:
        (watch,) = await editor.until(
            lambda: [
                r for r in editor.registrations if r.method == "workspace/didChangeWatchedFiles"
            ]
        )
        assert "pyproject.toml" in str(watch.register_options)

        uri = editor.open("train.py", MIXED)
        assert codes(await editor.diagnostics(uri, version=1)) == ["DVL101"]

        pyproject.write_text('[tool.devlint]\nignore = ["DVL101"]\n')
        before = len(editor.published)
        editor.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[
                    types.FileEvent(
                        uri=editor.uri("pyproject.toml"), type=types.FileChangeType.Changed
                    )
                ]
            )
        )
        assert await editor.diagnostics(uri, after=before) == ()

        pyproject.write_text('[tool.devlint]\nignore = "DVL101"\n')  # not a list
        logs, before = len(editor.logs), len(editor.published)
        editor.save(editor.uri("pyproject.toml"))
        message = await editor.log_containing("invalid configuration", after=logs)
        assert "ignore" in message
        assert await editor.diagnostics(uri, after=before) == ()  # the last valid settings
        assert any("ignore" in shown.message for shown in editor.shown)

    asyncio.run(body())


def test_an_unknown_code_in_the_config_is_shown_not_a_silent_linter(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.devlint]\nselect = ["DVL11"]\n')

    @session(tmp_path)
    async def body(editor: Editor) -> None:
        uri = editor.open("train.py", MIXED)
        assert codes(await editor.diagnostics(uri, version=1)) == ["DVL101"]  # the defaults
        (shown,) = await editor.until(lambda: editor.shown)
        assert shown.type == types.MessageType.Warning
        assert "select: unknown rule code 'DVL11' (did you mean DVL10?)" in shown.message
        assert "pyproject.toml" in shown.message

    asyncio.run(body())


def test_a_pyproject_too_deep_to_read_is_shown_and_the_defaults_apply(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "pyproject.toml").write_text(f"[tool.devlint]\nignore = {deep}\n")

    @session(tmp_path)
    async def body(editor: Editor) -> None:
        uri = editor.open("train.py", MIXED)
        assert codes(await editor.diagnostics(uri, version=1)) == ["DVL101"]
        (shown,) = editor.shown
        assert shown.message.endswith(
            "pyproject.toml: [tool.devlint] ignore: value nested too deeply to read"
        )

    asyncio.run(body())


def test_docs_url_option_sets_the_code_description(tmp_path: Path) -> None:
    @session(tmp_path, {"docsUrl": "https://example.org/devlint/{code}.html"})
    async def body(editor: Editor) -> None:
        uri = editor.open("train.py", MIXED)
        (mixed,) = await editor.diagnostics(uri, version=1)
        assert mixed.code_description is not None
        assert mixed.code_description.href == "https://example.org/devlint/DVL101.html"

    asyncio.run(body())


def test_noqa_is_honoured(tmp_path: Path) -> None:
    @session(tmp_path)
    async def body(editor: Editor) -> None:
        uri = editor.open("train.py", MIXED.replace("a + b\n", "a + b  # noqa: DVL101\n"))
        assert await editor.diagnostics(uri, version=1) == ()

    asyncio.run(body())


@pytest.mark.parametrize(
    ("raw", "debounce", "complaints"),
    [
        (None, 200, 0),
        ({"debounceMs": 0}, 0, 0),
        ({"debounceMs": -1}, 200, 1),
        ({"debounceMs": True}, 200, 1),
        ({"docsUrl": 3}, 200, 1),
        ("fast", 200, 1),
    ],
)
def test_initialization_options_are_validated(raw: Any, debounce: int, complaints: int) -> None:
    options, problems = Options.parse(raw)
    assert options.debounce_ms == debounce
    assert len(problems) == complaints


@pytest.mark.parametrize(
    ("severity", "expected"),
    [
        (Severity.ERROR, types.DiagnosticSeverity.Error),
        (Severity.WARNING, types.DiagnosticSeverity.Warning),
        (Severity.INFO, types.DiagnosticSeverity.Information),
    ],
)
def test_severity_is_mapped_from_the_rule(
    severity: Severity, expected: types.DiagnosticSeverity
) -> None:
    finding = Diagnostic("t.py", 1, 0, 1, 1, "DVL204", "m", severity)
    converted = to_lsp_diagnostic(finding, ["x = 1\n"], PositionCodec(), None)
    assert converted.severity == expected
    assert converted.code == "DVL204"


def test_an_unsaved_edit_to_an_imported_module_relints_the_open_importer(tmp_path: Path) -> None:
    projects = Path(__file__).resolve().parent.parent / "fixtures" / "projects"
    moving, forgetting = projects / "helper_moves_batch", projects / "helper_forgets_labels"
    (tmp_path / "pyproject.toml").write_text("")

    @session(tmp_path, {"debounceMs": 50})
    async def body(editor: Editor) -> None:
        helper = editor.open("utils.py", (moving / "utils.py").read_text())
        train = editor.open("train.py", (forgetting / "train.py").read_text())
        assert await editor.diagnostics(train, version=1) == ()  # the helper moves the labels
        before = len(editor.published)
        editor.replace_all(helper, (forgetting / "utils.py").read_text())  # not saved
        found = await editor.until(
            lambda: [p for p in editor.published[before:] if p.uri == train and p.diagnostics]
        )
        (diagnostic,) = found[0].diagnostics
        assert diagnostic.code == "DVL301" and diagnostic.range.start.line == 16
        assert (tmp_path / "utils.py").read_text() == (moving / "utils.py").read_text()

    asyncio.run(body())


def recorded(root: Path) -> tuple[Path, Path, dict[str, str]]:
    """The log and the gate of ``recorded_lsp`` in ``root``, and the environment naming them."""
    log, gate = root / "lints.jsonl", root / "gate"
    path = [str(Path(__file__).parent), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {"PYTHONPATH": os.pathsep.join(path), LOG_ENV: str(log), GATE_ENV: str(gate)}
    return log, gate, env


async def taken_in(editor: Editor, uri: str) -> None:
    """A request and its answer: the server has read every message sent before it."""
    await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )


def test_versions_superseded_while_a_lint_runs_are_never_linted(tmp_path: Path) -> None:
    """Changes that arrive while a lint runs replace the lint waiting for its turn: of a
    burst, only the last version is linted and published."""
    log, gate, env = recorded(tmp_path)

    @session(tmp_path, {"debounceMs": 0}, server=RECORDED_LSP, env=env)
    async def body(editor: Editor) -> None:
        uri = editor.open("train.py", versioned(DISCARDED, 1, hold=True))
        await editor.until(lambda: records(log), poll=True)  # version 1's lint runs, held
        for version in range(2, 7):
            editor.replace_all(uri, versioned(DISCARDED, version))
            await taken_in(editor, uri)
        gate.touch()
        (last,) = await editor.diagnostics(uri, version=6)
        assert last.code == "DVL201"
        assert [p.version for p in editor.published if p.uri == uri] == [6]

    asyncio.run(body())
    # After the server's exit: a lint started in a thread would have ended by then.
    assert [record["version"] for record in records(log)] == [1, 6]


def test_the_analyses_of_replaced_versions_do_not_stay_in_memory(tmp_path: Path) -> None:
    """However many versions are linted, the server holds the analysis of the last one
    only: the reports it replaces are freed (cyclic garbage, which devlint's raised
    collector thresholds would leave for tens of lints)."""
    log, _, env = recorded(tmp_path)
    functions = "".join(
        f"\n\ndef step_{n}(batch):\n    return batch * torch.ones(4)\n"
        for n in range(FLOOR_LINES // 4)
    )
    text = DISCARDED + functions
    assert text.count("\n") >= FLOOR_LINES  # the server collects after each lint of it

    @session(tmp_path, {"debounceMs": 0}, server=RECORDED_LSP, env=env)
    async def body(editor: Editor) -> None:
        uri = editor.open("train.py", versioned(text, 1))
        assert codes(await editor.diagnostics(uri, version=1)) == ["DVL201"]
        for version in range(2, 7):
            editor.replace_all(uri, versioned(text, version))
            (discarded,) = await editor.diagnostics(uri, version=version)
        (action,) = await editor.code_actions(uri, discarded, only=["quickfix"])
        assert action.title == "Assign the result to `x`"  # the last version's report serves

    asyncio.run(body())
    lints = records(log)
    assert [record["version"] for record in lints] == [1, 2, 3, 4, 5, 6]
    for before, lint in itertools.pairwise(lints):
        assert lint["alive"] == [before["version"]]
    assert [lint["futures"] for lint in lints[1:]] == [lints[1]["futures"]] * 5


def test_garbage_is_collected_once_the_lines_linted_reach_the_lines_held(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A full collection walks what is held: it waits for as many lines of lints, so that
    its cost stays a small part of theirs (and for ``FLOOR_LINES`` in a small project)."""
    collections: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda: collections.append(1) or 0)
    garbage = GarbageCollection()
    held = 3 * FLOOR_LINES
    linted = [garbage.after_lint(FLOOR_LINES, held) for _ in range(6)]
    assert linted == [False, False, True, False, False, True]
    assert len(collections) == 2
    small = [garbage.after_lint(FLOOR_LINES // 2, held=100) for _ in range(4)]
    assert small == [False, True, False, True]


def test_hovering_a_finding_explains_its_rule_and_where_its_values_come_from(
    tmp_path: Path,
) -> None:
    @session(tmp_path, {"debounceMs": 5000})
    async def body(editor: Editor) -> None:
        uri = editor.open("train.py", MIXED)
        (mixed,) = await editor.diagnostics(uri, version=1)
        hover = await editor.hover(uri, 6, 13)  # on the `+` of `a + b`
        assert hover is not None and hover.range == mixed.range
        assert isinstance(hover.contents, types.MarkupContent)
        assert hover.contents.kind == types.MarkupKind.Markdown
        title, message = hover.contents.value.split("\n\n")
        assert title == (
            "**DVL101 mixed-device-operands**: Tensors on different devices meet in one "
            "operation. ([rule](https://github.com/devlint/devlint/blob/main/docs/rules/DVL101.md))"
        )
        assert message == mixed.message  # which says where each side was made, and on what
        assert "`b` is on cpu (created without `device=` at line 6)" in message
        assert "`a` is on cuda (created at line 5)" in message

        assert await editor.hover(uri, 6, 11) is not None  # the range's first character
        assert await editor.hover(uri, 6, 16) is None  # just after it
        assert await editor.hover(uri, 4, 8) is None  # the line that made `a`: no finding
        editor.replace_all(uri, MIXED.replace("    return", "\n    return"))  # linted in 5 s
        assert await editor.hover(uri, 6, 13) is None  # the finding is not there any more

    asyncio.run(body())


def test_the_hover_links_the_places_in_other_files_the_finding_rests_on(tmp_path: Path) -> None:
    project = Path(__file__).resolve().parent.parent / "fixtures" / "projects"
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "lib").mkdir()
    losses = (project / "helper_meets_cpu_mask" / "losses.py").read_text()
    (tmp_path / "lib" / "losses.py").write_text(losses)
    train = (project / "helper_meets_cpu_mask" / "train.py").read_text()

    @session(tmp_path)
    async def body(editor: Editor) -> None:
        uri = editor.open("train.py", train.replace("from losses", "from lib.losses"))
        (mixed,) = await editor.diagnostics(uri, version=1)
        assert mixed.code == "DVL101"
        hover = await editor.hover(uri, mixed.range.start.line, mixed.range.start.character)
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        where = from_fs_path(str(tmp_path / "lib" / "losses.py"))
        assert hover.contents.value.endswith(f"\n\nIn other files: [lib/losses.py:6]({where}#L6)")

    asyncio.run(body())


def test_the_hover_escapes_markdown_outside_code_and_has_a_plain_text_form() -> None:
    finding = Diagnostic(
        "t.py", 3, 0, 3, 5, "DVL201", "`x.to(d)` returns a copy: its result_value <unused>"
    )
    href = "https://example.org/DVL201"
    markdown = hover_text([(finding, href)], None, markdown=True)
    assert markdown.endswith("\n\n`x.to(d)` returns a copy: its result\\_value \\<unused\\>")
    plain = hover_text([(finding, href)], None, markdown=False)
    assert plain == (
        "DVL201 transfer-result-discarded: A tensor is moved but the moved copy is discarded. "
        f"({href})\n\n`x.to(d)` returns a copy: its result_value <unused>"
    )
