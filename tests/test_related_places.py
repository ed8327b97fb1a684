"""A finding's related places are the places in other files its message names.

The rule kit's ``place`` names a line and, for another file's, cites it in the same value
(a ``Message``); joining messages joins what they cite, and the engine makes a finding's
cites its diagnostic's ``related``. Naming a place changes nothing else: a place named and
then left out of every message is cited by none (once it was recorded on ``Facts`` and went
to whichever finding came next).
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import pytest

from devlint.core.events import Facts
from devlint.core.imports import ModuleScope
from devlint.diagnostic import RelatedPlace, Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation
from devlint.rulekit.message import Message, place
from devlint.running import engine
from devlint.running.engine import lint_report

HERE = "import torch\nx = torch.ones(3)\ny = x + 1\n"
OTHER = "import torch\n\n\ndef make():\n    return torch.zeros(3)\n"
MASKS = RelatedPlace("/project/masks.py", 7)
MODEL = RelatedPlace("/project/model.py", 41)


def facts_importing_other() -> tuple[Facts, cst.Module]:
    """Facts of ``HERE``, which reached the project module ``model.py`` (``OTHER``)."""
    other = cst.parse_module(OTHER)
    scope = ModuleScope("model.py", other, "/project/model.py")
    return Facts(cst.parse_module(HERE), imported=[scope]), other


def test_a_place_in_this_file_is_its_line_and_cites_nothing() -> None:
    facts, _ = facts_importing_other()
    assert place(facts, facts.module.body[2]) == Message("line 3")


def test_a_place_in_another_file_cites_that_file_and_line() -> None:
    facts, other = facts_importing_other()
    make = other.body[1]
    assert isinstance(make, cst.FunctionDef)
    returned = make.body.body[0]  # `return torch.zeros(3)`, line 5
    assert place(facts, returned) == Message("model.py:5", (RelatedPlace("/project/model.py", 5),))


def test_a_node_of_no_file_it_knows_is_another_file_and_cites_nothing() -> None:
    facts, _ = facts_importing_other()
    assert place(facts, cst.parse_module("z = 1\n").body[0]) == Message("another file")


def test_joined_messages_cite_what_their_parts_cite_each_once_in_order() -> None:
    mask = Message("masks.py:7", (MASKS,))
    model = Message("model.py:41", (MODEL,))
    joined = "made at " + mask + ", moved at " + model + ", again at " + mask + "."
    assert joined == Message(
        "made at masks.py:7, moved at model.py:41, again at masks.py:7.", (MASKS, MODEL)
    )


def test_a_message_in_an_f_string_raises_rather_than_lose_its_places() -> None:
    cited = Message("masks.py:7", (MASKS,))
    with pytest.raises(TypeError, match="loses the places it cites"):
        _ = f"created at {cited}"


class NamesPlaces(Rule):
    """Reports ``x = ...`` with a message citing two places; then names a place it leaves
    out of its message and reports ``y = ...`` in plain text."""

    meta = RuleMeta(
        code="DVL997",
        name="names-places",
        summary="a test rule",
        severity=Severity.WARNING,
        runtime=RuntimeExpectation(),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        _, assign_x, assign_y = facts.module.body
        cites = (
            "made at "
            + Message("masks.py:7", (MASKS,))
            + " and "
            + Message("model.py:41", (MODEL,))
        )
        yield Finding(assign_x, cites, Severity.WARNING)
        unused = "at " + Message("masks.py:7", (MASKS,))
        assert unused.cites == (MASKS,)
        yield Finding(assign_y, "cites nothing", Severity.WARNING)


def test_a_diagnostic_relates_the_places_its_message_names_and_only_those(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(engine, "all_rules", lambda: [NamesPlaces])
    found = lint_report(HERE, "here.py").diagnostics
    assert [(d.line, d.message, d.related) for d in found] == [
        (2, "made at masks.py:7 and model.py:41", (MASKS, MODEL)),
        (3, "cites nothing", ()),
    ]
