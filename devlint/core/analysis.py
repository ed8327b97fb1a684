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
from devlint.core.events import Facts, ReplicaStateWrite
from devlint.core.syntax import assignments_to_self


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
        self.note_replica_writes()
        facts = Facts(
            self.module,
            values=self.values,
            runtime_device=self.runtime_device,
            spawn_start_method=self.spawn_start_method,
            sets_cuda_device=self.sets_cuda_device,
            places_tensors=self.places_tensors,
        )
        facts.collect(self.events)
        return facts

    def note_replica_writes(self) -> None:
        """``self.x = ...`` in the forward of a DataParallel-wrapped class: lost on replicas."""
        for info, wrap in self.wrapped_classes.items():
            forward = info.methods.get("forward")
            if forward is None:
                continue
            for node, name in assignments_to_self(forward.node):
                self.events.append(ReplicaStateWrite(node, name, wrap))
