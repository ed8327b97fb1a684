"""Turning the emulation on and off, in this thread, in new threads and across fork."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from devlint.harness.emulator import cuda_api, distributed, parallel, serialization, tensor_api
from devlint.harness.emulator.context import CallContext
from devlint.harness.emulator.dispatch import EmulatedCuda
from devlint.harness.emulator.patches import Patches
from devlint.harness.emulator.state import EmulatorState


class Emulation:
    """An installed emulation: its state and how to undo it."""

    def __init__(self, gpus: int) -> None:
        self.state = EmulatorState(gpus)
        self._patches = Patches()
        self._modes = ExitStack()

    def modes(self) -> ExitStack:
        """Enter the function and dispatch modes (each thread needs its own)."""
        stack = ExitStack()
        stack.enter_context(CallContext())
        stack.enter_context(EmulatedCuda(self.state))
        return stack

    def start(self) -> None:
        state, patches = self.state, self._patches
        cuda_api.install(patches, state)
        tensor_api.install(patches, state)
        serialization.install(patches, state)
        parallel.install(patches, state)
        distributed.install(patches, state)
        _install_thread_modes(patches, self)
        self._modes.enter_context(self.modes())

    def stop(self) -> None:
        self._modes.close()
        self._patches.restore()


_active: Emulation | None = None


def install(gpus: int = 2) -> Emulation:
    """Emulate ``gpus`` CUDA devices in this process until :func:`uninstall`."""
    global _active
    if _active is not None:
        raise RuntimeError("the CUDA emulation is already installed")
    emulation = Emulation(gpus)
    emulation.start()
    _active = emulation
    return emulation


def uninstall() -> None:
    global _active
    if _active is not None:
        _active.stop()
        _active = None


def active() -> Emulation | None:
    return _active


@contextmanager
def emulated(gpus: int = 2) -> Iterator[Emulation]:
    """The emulation for the duration of a ``with`` block (tests)."""
    emulation = install(gpus)
    try:
        yield emulation
    finally:
        uninstall()


def _install_thread_modes(patches: Patches, emulation: Emulation) -> None:
    """New threads (DataLoader's pin thread, DataParallel's replicas) run emulated too."""
    original = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]

    def bootstrap_inner(thread: threading.Thread) -> None:
        with emulation.modes():
            original(thread)

    patches.set(threading.Thread, "_bootstrap_inner", bootstrap_inner)


def _after_fork_in_child() -> None:
    if _active is not None:
        _active.state.after_fork_in_child()


os.register_at_fork(after_in_child=_after_fork_in_child)
