"""Fixes are built only when asked for: building them costs more than the analysis.

``devlint check`` (``lint_source``) builds every fix; the flake8 plugin and the
language server's diagnostics build none; a code action builds the fixes it
offers, once per published version, and a fix that fails to build costs that
fix alone.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import ClassVar

import libcst as cst
import pytest
from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace import Workspace

from devlint.config import Settings
from devlint.core.events import DiscardedTransfer, Facts
from devlint.diagnostic import Severity, SuggestedFix
from devlint.frontends.flake8_plugin import Plugin
from devlint.frontends.lsp import DevlintLanguageServer
from devlint.notices import INTERNAL_ERROR
from devlint.rule import Finding, Fix, Rule, RuleMeta, RuntimeExpectation
from devlint.rules import all_rules
from devlint.rules import dvl201_transfer_result_discarded as dvl201
from devlint.running import engine
from devlint.running.engine import lint_report, lint_source

ROOT = Path(__file__).resolve().parent.parent
EVERY_RULE = Settings(select=("DVL",))
FIXABLE = [rule for rule in all_rules() if rule.meta.fixable]
FIXABLE_EXAMPLES = [next((ROOT / "rules").glob(f"{rule.meta.code}-*/bad.py")) for rule in FIXABLE]
SAFE_AND_UNSAFE = """\
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)
        self.scale = torch.ones(3)

    def forward(self, x):
        return self.proj(x) * self.scale


x = torch.ones(3)
x.to("cuda")
y = torch.ones(2)
y.cuda()
"""
"""An unsafe fix (DVL104, line 12) and two safe ones (DVL201, lines 16 and 18)."""


# -- recording fix builders ----------------------------------------------------------


@pytest.fixture
def fix_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The code of the rule of each fix built, every fixable rule's builder recorded."""
    calls: list[str] = []
    for rule in FIXABLE:
        module = sys.modules[rule.__module__]
        assert hasattr(module, "_fix"), f"{rule.meta.code}: name its fix builder `_fix`"
        monkeypatch.setattr(module, "_fix", _recorded(module._fix, rule.meta.code, calls))
    return calls


def _recorded(build: Callable[..., Fix | None], code: str, calls: list[str]):
    def recorded(*args: object) -> Fix | None:
        calls.append(code)
        return build(*args)

    return recorded


def test_the_recording_sees_every_fixable_rule(fix_calls: list[str]) -> None:
    """``devlint check``'s path builds every fix, so the tests below could fail."""
    for path in FIXABLE_EXAMPLES:
        lint_source(path.read_text(encoding="utf-8"), str(path), EVERY_RULE)
    assert sorted(set(fix_calls)) == sorted(rule.meta.code for rule in FIXABLE)


def test_the_flake8_plugin_builds_no_fix(fix_calls: list[str]) -> None:
    for path in FIXABLE_EXAMPLES:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        assert list(Plugin(tree=None, lines=lines, filename=str(path)).run())
    assert fix_calls == []


# -- the engine ----------------------------------------------------------------------


class TwoContexts(Rule):
    """Reports the last statement twice, as a node analysed in two contexts is, and the
    statement before it, which a ``# noqa`` silences."""

    meta = RuleMeta(
        code="DVL998",
        name="two-contexts",
        summary="a test rule",
        severity=Severity.WARNING,
        runtime=RuntimeExpectation(),
        fixable=True,
    )
    built: ClassVar[list[str]] = []

    def check(self, facts: Facts) -> Iterator[Finding]:
        *_, silenced, last = facts.module.body
        for message, node in (("first", last), ("second", last), ("silenced", silenced)):
            yield Finding(node, message, Severity.WARNING, partial(self.build, message, node))

    def build(self, title: str, node: cst.CSTNode) -> Fix:
        self.built.append(title)
        if title == "broken":
            raise RuntimeError("a bug in a fix")
        return Fix(node, title, title)


TWO_CONTEXTS = "import torch\nx = 1  # noqa: DVL998\ny = 2\n"


@pytest.fixture
def two_contexts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The engine runs ``TwoContexts`` only; the titles of the fixes it builds."""
    monkeypatch.setattr(engine, "all_rules", lambda: [TwoContexts])
    monkeypatch.setattr(TwoContexts, "built", [])
    return TwoContexts.built


def test_the_fix_kept_is_the_fix_of_the_finding_kept(two_contexts: list[str]) -> None:
    report = lint_report(TWO_CONTEXTS)
    assert [(d.line, d.message, d.fix) for d in report.diagnostics] == [(3, "first", None)]
    assert two_contexts == []

    (diagnostic,) = lint_source(TWO_CONTEXTS)
    assert diagnostic.message == "first"
    assert diagnostic.fix is not None and diagnostic.fix.title == "first"
    assert two_contexts == ["first"]  # not the other context's, not the silenced line's


def test_a_report_builds_each_fix_once(two_contexts: list[str]) -> None:
    report = lint_report(TWO_CONTEXTS)
    (diagnostic,) = report.diagnostics
    first = report.fix_for(diagnostic)
    assert isinstance(first, SuggestedFix) and first.title == "first"
    assert report.fix_for(diagnostic) is first
    assert report.with_fixes()[0].fix is first
    assert two_contexts == ["first"]


def test_a_fix_that_raises_raises_once_then_is_no_fix(
    two_contexts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(TwoContexts, "check", _broken_check)
    report = lint_report(TWO_CONTEXTS)
    (diagnostic,) = report.diagnostics
    with pytest.raises(RuntimeError, match="a bug in a fix"):
        report.fix_for(diagnostic)
    assert report.fix_for(diagnostic) is None
    assert two_contexts == ["broken"]


def test_devlint_check_reports_a_fix_that_raises_as_an_internal_error(
    two_contexts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(TwoContexts, "check", _broken_check)
    (notice,) = lint_source(TWO_CONTEXTS)
    assert notice.code == INTERNAL_ERROR
    assert "a bug in a fix" in notice.message
    assert [d.message for d in lint_source(TWO_CONTEXTS, fixes=False)] == ["broken"]


def _broken_check(self: TwoContexts, facts: Facts) -> Iterator[Finding]:
    last = facts.module.body[-1]
    yield Finding(last, "broken", Severity.WARNING, partial(self.build, "broken", last))


# -- the language server -------------------------------------------------------------


class RecordingServer(DevlintLanguageServer):
    """The server without a client: what it sends and logs is recorded."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        self.protocol._workspace = Workspace(from_fs_path(str(root)))  # as `initialize` does
        self.sent: dict[str, list[types.Diagnostic]] = {}
        self.logs: list[str] = []

    def _send(self, uri: str, version: int | None, diagnostics: list[types.Diagnostic]) -> None:
        self.sent[uri] = diagnostics

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.logs.append(message)

    def open_and_lint(self, name: str, text: str) -> list[types.Diagnostic]:
        """Open a document and lint it as the server does after ``didOpen``; what it published."""
        uri = self.uri(name)
        self.workspace.put_text_document(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
        self.open_uris.add(uri)
        asyncio.run(self._lint_later(uri, 0))
        assert uri in self.sent, self.logs
        return self.sent[uri]

    def uri(self, name: str) -> str:
        return from_fs_path(str(self.root / name))

    def actions(
        self, name: str, diagnostics: Sequence[types.Diagnostic], only: list[str]
    ) -> list[types.CodeAction]:
        return self.code_actions(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri(name)),
                range=diagnostics[0].range,
                context=types.CodeActionContext(diagnostics=list(diagnostics), only=only),
            )
        )

    def internal_errors(self) -> list[str]:
        return [message for message in self.logs if "internal error" in message]


def edits(action: types.CodeAction) -> list[tuple[int, int, int, int, str]]:
    """The action's edits as devlint's (line, column, end line, end column, text); the
    test sources are ASCII, where UTF-16 units are code points."""
    assert action.edit is not None and action.edit.document_changes is not None
    (change,) = action.edit.document_changes
    found = []
    for edit in change.edits:
        start, end = edit.range.start, edit.range.end
        found.append((start.line + 1, start.character, end.line + 1, end.character, edit.new_text))
    return found


def source_edits(fix: SuggestedFix | None) -> list[tuple[int, int, int, int, str]]:
    assert fix is not None
    return [(e.line, e.column, e.end_line, e.end_column, e.text) for e in fix.edits]


def test_publishing_builds_no_fix(tmp_path: Path, fix_calls: list[str]) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.devlint]\nselect = ["DVL"]\n')
    server = RecordingServer(tmp_path)
    for path in FIXABLE_EXAMPLES:
        name = f"{path.parent.name}.py"
        assert server.open_and_lint(name, path.read_text(encoding="utf-8")), name
    assert fix_calls == []


def test_code_actions_build_the_fixes_they_offer_once(tmp_path: Path, fix_calls: list[str]) -> None:
    checked = lint_source(SAFE_AND_UNSAFE, str(tmp_path / "m.py"))  # what --fix would apply
    fix_calls.clear()
    server = RecordingServer(tmp_path)
    published = server.open_and_lint("m.py", SAFE_AND_UNSAFE)
    assert [d.code for d in published] == ["DVL104", "DVL201", "DVL201"]
    assert fix_calls == []

    unsafe, x, _ = published
    (register,) = server.actions("m.py", [unsafe], ["quickfix"])
    assert fix_calls == ["DVL104"]  # only the fix asked for
    assert register.title == "Register `scale` as a buffer (unsafe)"
    assert not register.is_preferred
    assert register.diagnostics == [unsafe]
    assert edits(register) == source_edits(checked[0].fix)

    (assign_x,) = server.actions("m.py", [x], ["quickfix"])
    assert assign_x.title == "Assign the result to `x`" and assign_x.is_preferred
    assert edits(assign_x) == source_edits(checked[1].fix)

    (fix_all,) = server.actions("m.py", [x], ["source.fixAll"])
    assert fix_all.kind == "source.fixAll.devlint"
    assert edits(fix_all) == source_edits(checked[1].fix) + source_edits(checked[2].fix)

    server.actions("m.py", published, ["quickfix", "source.fixAll"])
    assert sorted(fix_calls) == ["DVL104", "DVL201", "DVL201"]  # each built once


def test_resolving_clients_build_the_fix_all_only_when_it_is_picked(
    tmp_path: Path, fix_calls: list[str]
) -> None:
    checked = lint_source(SAFE_AND_UNSAFE, str(tmp_path / "m.py"))
    fix_calls.clear()
    server = RecordingServer(tmp_path)
    server.resolves_edits = True
    _, x, _ = server.open_and_lint("m.py", SAFE_AND_UNSAFE)

    assign_x, fix_all = server.code_actions(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=server.uri("m.py")),
            range=x.range,
            context=types.CodeActionContext(diagnostics=[x]),  # no kind filter: a cursor rests
        )
    )
    assert fix_calls == ["DVL201"]  # x's fix, nothing for the fix-all yet
    assert edits(assign_x) == source_edits(checked[1].fix)
    assert fix_all.edit is None

    resolved = server.resolve_code_action(fix_all)
    assert edits(resolved) == source_edits(checked[1].fix) + source_edits(checked[2].fix)
    assert sorted(fix_calls) == ["DVL104", "DVL201", "DVL201"]


def test_a_fix_that_fails_to_build_costs_only_that_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = dvl201._fix

    def broken_for_x(facts: Facts, transfer: DiscardedTransfer) -> Fix | None:
        if facts.code_of(transfer.receiver.node) == "x":
            raise RuntimeError("a bug in a fix")
        return build(facts, transfer)

    monkeypatch.setattr(dvl201, "_fix", broken_for_x)
    server = RecordingServer(tmp_path)
    _, x, y = server.open_and_lint("m.py", SAFE_AND_UNSAFE)
    assert (x.code, y.code) == ("DVL201", "DVL201")

    assert server.actions("m.py", [x], ["quickfix"]) == []
    (error,) = server.internal_errors()
    assert "DVL201 at m.py:16" in error and "RuntimeError: a bug in a fix" in error

    (assign_y,) = server.actions("m.py", [y], ["quickfix"])
    assert edits(assign_y) == [(18, 0, 18, 8, "y = y.cuda()")]
    *quick_fixes, fix_all = server.actions("m.py", [x, y], ["quickfix", "source.fixAll"])
    assert quick_fixes == [assign_y]
    assert edits(fix_all) == [(18, 0, 18, 8, "y = y.cuda()")]
    assert len(server.internal_errors()) == 1  # logged once, not built again
