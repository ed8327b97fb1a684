"""The rule base class: the one place a rule's metadata lives.

A rule is a class in its own module under ``devlint/rules/``. It declares a
``meta`` and implements ``check``, which reads the facts of one analysed file
and yields findings. Rules never walk the tree for devices themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import libcst as cst

from devlint.core.conflicts import first_per_source
from devlint.diagnostic import Severity, SourceEdit, SuggestedFix
from devlint.rulekit.describe import clash_phrase
from devlint.rulekit.message import Message

if TYPE_CHECKING:
    from devlint.core.analysis import Facts
    from devlint.core.events import Claim, Clash, ModuleCall, OperandsMeet


@dataclass(frozen=True)
class RuntimeExpectation:
    """What the rule's ``bad.py`` does on a GPU machine; the harness checks it.

    Either an exception (type name and a stable fragment of its message) or,
    for bugs that fail silently, a measurable ``symptom`` the example prints.
    """

    exception: str | None = None
    message: str | None = None
    symptom: str | None = None
    gpus: int = 1


@dataclass(frozen=True)
class RuleMeta:
    """Code, name and behaviour of a rule."""

    code: str
    name: str
    summary: str
    severity: Severity
    runtime: RuntimeExpectation
    fixable: bool = False
    default_enabled: bool = True


@dataclass(frozen=True)
class Fix:
    """Replace the source text of ``node`` (its parentheses included) by ``replacement``.

    ``safe`` fixes change nothing but the bug they repair and are applied by
    ``--fix``; unsafe ones may change behaviour elsewhere and need
    ``--unsafe-fixes`` (ruff's model). The rule's ``## Fix safety`` says which.
    """

    node: cst.CSTNode
    replacement: str
    title: str
    safe: bool = True

    def suggestion(self, facts: Facts) -> SuggestedFix:
        """The fix as text edits in line/column terms, for the front ends."""
        node = self.node
        first = node.lpar[0] if getattr(node, "lpar", None) else node
        last = node.rpar[-1] if getattr(node, "rpar", None) else node
        (line, column), (end_line, end_column) = facts.span_of(first)[0], facts.span_of(last)[1]
        edit = SourceEdit(line, column, end_line, end_column, self.replacement)
        return SuggestedFix(self.title, self.safe, (edit,))


FixBuilder = Callable[[], Fix | None]
"""Builds a finding's fix when someone asks for it (``functools.partial(_fix, facts, ...)``)."""


@dataclass(frozen=True)
class Finding:
    """A rule's verdict on one node; the engine turns it into a Diagnostic.

    ``message`` is text, or a ``Message`` when it names places in other files: those
    become the diagnostic's related places.

    ``fix`` is a builder, not a fix: building one costs more than finding the bug
    (parent maps, code generation), and only ``--fix`` and an editor's code
    actions ask for it. It returns None when no fix can be made after all.
    """

    node: cst.CSTNode
    message: Message | str
    severity: Severity
    fix: FixBuilder | None = None

    def as_message(self) -> Message:
        """The message as a ``Message``, with the places it cites (none for plain text)."""
        return self.message if isinstance(self.message, Message) else Message(self.message)


def owned_clashes(facts: Facts, *claims: Claim) -> list[tuple[OperandsMeet | ModuleCall, Clash]]:
    """The clashes of a file that one of ``claims`` owns, in analysis order.

    The engine assigns owners once per file before any rule runs, since a clash
    belongs to the first claim in the precedence list that accepts it.
    """
    owners = facts.clash_owners
    if owners is None:
        raise LookupError("clash owners are assigned by devlint.clash_owners.assign")
    return [(event, clash) for event, clash, owner in owners if owner in claims]


class Rule:
    """Base class of every rule. Subclasses set ``meta`` and implement ``check``."""

    meta: ClassVar[RuleMeta]

    def check(self, facts: Facts) -> Iterator[Finding]:
        raise NotImplementedError


class ClashRule(Rule):
    """A rule that reports the clashes its claims own (``clash_owners.py`` orders the
    claims): each clash once per cpu-side source unless ``every_clash``, at the place it
    happens, saying where both sides came from and then the rule's ``advice``.

    Subclasses set ``owns`` (their claims) and override ``finding`` for another message,
    place or fix, or ``check`` to report more than clashes.
    """

    owns: ClassVar[tuple[Claim, ...]]
    advice: ClassVar[str | None] = None
    every_clash: ClassVar[bool] = False  # True: a clash per event, not per cpu-side source

    def check(self, facts: Facts) -> Iterator[Finding]:
        found = owned_clashes(facts, *self.owns)
        for event, clash in found if self.every_clash else first_per_source(found):
            yield self.finding(facts, event, clash)

    def finding(self, facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> Finding:
        message = clash_phrase(facts, clash)
        if self.advice is not None:
            message += f"; {self.advice}"
        return Finding(event.node, message, clash.severity)
