"""The per-file pass: one abstract interpretation over the LibCST tree.

Branches join, loops run to a fixpoint, functions defined in the file are
analysed once on their own and again for each distinct set of argument values
they are called with, classes remember what ``__init__`` leaves on self. The
layers, each in its own module: expressions → calls → statements →
functions → classes → this module, which runs a file and hands rules the facts.
"""

from __future__ import annotations

import libcst as cst

from devlint.config import Settings
from devlint.core.binder import Env
from devlint.core.classes import ClassAnalysis
from devlint.core.events import (
    CheckpointLoad,
    CreateThenMove,
    DiscardedTransfer,
    Facts,
    HostConversion,
    LoaderCreated,
    ModuleCall,
    OperandsMeet,
    UnsyncedRead,
)


def analyse(module: cst.Module, settings: Settings) -> Facts:
    """Analyse one parsed file; the facts are shared by every rule."""
    return Analysis(module, settings).run()


class Analysis(ClassAnalysis):
    """The analysis of one module."""

    def __init__(self, module: cst.Module, settings: Settings) -> None:
        super().__init__()
        self.module = module
        self.device_names = frozenset(settings.device_names)

    def run(self) -> Facts:
        env = Env()
        self.pending.append([])
        final = self.block(self.module.body, env)
        self.flush_pending(final if final is not None else env)
        facts = Facts(
            self.module,
            events=self.events,
            values=self.values,
            runtime_device=self.runtime_device,
            spawn_start_method=self.spawn_start_method,
        )
        lists = {
            OperandsMeet: facts.operand_meetings,
            ModuleCall: facts.module_calls,
            DiscardedTransfer: facts.discarded_transfers,
            HostConversion: facts.host_conversions,
            CheckpointLoad: facts.checkpoint_loads,
            CreateThenMove: facts.creations_then_moves,
            LoaderCreated: facts.loaders,
            UnsyncedRead: facts.unsynced_reads,
        }
        for event in self.events:
            lists[type(event)].append(event)
        return facts
