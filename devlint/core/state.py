"""What one file's analysis shares: the state every part writes, and how the parts meet.

The interpreter is a handful of parts, each in its own module: ``Expressions``
(values of expressions), ``Calls`` (what calls do to devices), ``Wrappers``
(data-parallel wrappers), ``Flow`` (statements and control flow),
``Functions`` and ``Classes`` (code the file defines). They are separate
objects, not layers of one class: each reads and writes the one
``AnalysisState`` and calls the parts it needs through the references its
``connect`` is given, once, when ``core/analysis.py`` assembles them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import libcst as cst

from devlint.core.events import Collective, Event, ModuleCall, OperandsMeet
from devlint.core.values import Value

if TYPE_CHECKING:
    from devlint.core.imports import Importer, ModuleScope
    from devlint.core.scopes import ClassInfo, FunctionInfo


_RESITED = (OperandsMeet, ModuleCall, Collective)
"""Events of another file's code that values from this file may cause."""
_ROOTED = (OperandsMeet, ModuleCall)
"""Events whose assumed devices depend on the run they happen in (``root``)."""


@dataclass
class Recording:
    """The events recorded inside one ``with state.recording()`` block."""

    log: list[Event]
    start: int
    end: int | None = None  # None: the block is still running

    @property
    def events(self) -> list[Event]:
        return self.log[self.start : self.end]

    def discard(self) -> None:
        """Forget them (they rest on a state no run has); nothing may be recorded after."""
        if self.end is not None and self.end != len(self.log):
            raise AssertionError("events were recorded after the ones to discard")
        del self.log[self.start :]


@dataclass
class AnalysisState:
    """What the analysis of one file has found so far: the events rules read, the value of
    every evaluated expression, and what the file as a whole is seen to do."""

    module: cst.Module
    device_names: frozenset[str]
    events: list[Event] = field(default_factory=list)
    values: dict[cst.CSTNode, Value] = field(default_factory=dict)
    runtime_device: bool = False  # the file picks a device at run time
    places_tensors: bool = False  # moves, `.device`, `device=`, nn.Module classes seen
    spawn_start_method: bool = False
    sets_cuda_device: bool = False
    importer: Importer | None = None
    """Finds the project modules the file imports; None: every import is outside."""
    home: ModuleScope | None = None
    """Set when this analysis runs another file's top level for its importers."""
    imported: list[ModuleScope] = field(default_factory=list)
    """The project modules the file's imports reached, in the order first seen."""
    running_homes: list[ModuleScope | None] = field(default_factory=list)
    """Where each running function was defined, innermost last (None: in this file)."""

    home_calls: list[tuple[cst.Call, cst.FunctionDef | None]] = field(default_factory=list)
    """The calls of this file's code being evaluated, innermost last, with their function."""
    search_folders: list[str] = field(default_factory=list)
    """Folders the file's top level adds to ``sys.path`` (``sys.path.append("core")``)."""
    free_runs: list[FunctionInfo] = field(default_factory=list)
    """The functions being run with unknown arguments (``flush_pending``), outermost first."""
    unsettled: list[ClassInfo] = field(default_factory=list)
    """The file's classes whose ``__init__`` waits for its first reader or the module's end."""

    def record(self, event: Event) -> None:
        """Keep an event for the rules. Code of another file that this file's call runs is
        kept as happening at that call, for the rules to report what values from here cause
        there; the other file's own analysis reports the rest. A meeting is stamped with the
        run it happens in now (a cached call's events are replayed in another run)."""
        if isinstance(event, _ROOTED):
            root = self.free_runs[0] if self.free_runs else None
            site = self._site_in(root, event.node)
            if event.root is not root or event.root_site is not site:
                event = replace(event, root=root, root_site=site)
        if self.code_home() is None:
            self.events.append(event)
        elif isinstance(event, _RESITED) and self.home_calls:
            site, function = self.home_calls[-1]
            moved = replace(event, node=site, elsewhere=event.node)
            if not isinstance(moved, Collective):
                moved = replace(moved, function=function)
            self.events.append(moved)

    def _site_in(self, root: FunctionInfo | None, node: cst.CSTNode) -> cst.CSTNode | None:
        """The call of ``root``'s body that is being evaluated now, or ``node`` itself."""
        if root is None:
            return None
        return next((call for call, function in self.home_calls if function is root.node), node)

    @contextmanager
    def recording(self) -> Iterator[Recording]:
        """Watch what the block records: a cached call keeps it to replay, a pass whose
        state no run has discards it."""
        recording = Recording(self.events, len(self.events))
        try:
            yield recording
        finally:
            recording.end = len(self.events)

    def replay(self, events: list[Event]) -> None:
        """Record again what a cached call or construction recorded the first time."""
        for event in events:
            self.record(event)

    def code_home(self) -> ModuleScope | None:
        """The file whose code runs now (None: this one)."""
        return self.running_homes[-1] if self.running_homes else self.home

    def note_import(self, scope: ModuleScope) -> None:
        if scope not in self.imported:
            self.imported.append(scope)


class Part:
    """One part of the interpreter: it shares the state, and ``connect`` gives it the parts
    it calls (``core/roles.py`` says what each offers)."""

    def __init__(self, state: AnalysisState) -> None:
        self.state = state
