"""``AnalysisState.recording``: what a cached call keeps to replay, and what a loop pass
whose state no iteration has throws away."""

from __future__ import annotations

import libcst as cst
import pytest

from devlint.core.events import Event
from devlint.core.state import AnalysisState


def _state() -> AnalysisState:
    return AnalysisState(cst.parse_module(""), frozenset())


def _event() -> Event:
    return Event(cst.Name("x"))


def test_a_recording_holds_the_events_of_its_block_only():
    state = _state()
    before = _event()
    state.record(before)
    inside = [_event(), _event()]
    with state.recording() as recorded:
        for event in inside:
            state.record(event)
    state.record(_event())
    assert recorded.events == inside
    assert state.events[0] is before and len(state.events) == 4


def test_discarding_drops_the_block_and_keeps_what_came_before():
    state = _state()
    before = _event()
    state.record(before)
    with state.recording() as recorded:
        state.record(_event())
    recorded.discard()
    assert state.events == [before]


def test_nested_recordings_see_their_own_blocks():
    state = _state()
    with state.recording() as outer:
        state.record(_event())
        with state.recording() as inner:
            state.record(_event())
        inner.discard()
    assert len(outer.events) == 1 and inner.events == []


def test_events_recorded_after_the_block_cannot_be_discarded_with_it():
    state = _state()
    with state.recording() as recorded:
        state.record(_event())
    state.record(_event())
    with pytest.raises(AssertionError):
        recorded.discard()
