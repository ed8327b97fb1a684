"""How ``devlint run`` and ``devlint confirm`` end on SIGTERM, SIGHUP and SIGINT.

Left to Python, SIGTERM and SIGHUP kill devlint on the spot, leaving the
program it runs (in its own session, out of reach of the signal) and its
temporary folders behind. Here the first of these signals is raised as ``Terminated``, but only
while devlint waits (``interruptible``): a folder being made or a process being
started is first assigned to the code that removes it, and that code is never
cut short. Later signals are noted and ignored, so the cleanup finishes. The
command then exits with 128 + the signal's number, as a shell reports a process
the signal killed.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator

SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
GRACE_SECONDS = 5.0
"""How long a program has to end after devlint passes the signal on, before it is killed."""


class Terminated(BaseException):
    """A termination signal, raised where devlint waits (a ``BaseException``, like
    ``KeyboardInterrupt``, so that no ``except Exception`` takes it for an error)."""

    def __init__(self, number: int) -> None:
        super().__init__(signal.Signals(number).name)
        self.number = number


class _Signals:
    """What arrived, and whether the main thread is in a wait that may be interrupted."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.received: int | None = None
        self.raised = False
        self.waiting = 0

    def handle(self, number: int, frame: object) -> None:
        if self.received is None:
            self.received = number
        if self.waiting:
            self.raise_received()

    def raise_received(self) -> None:
        if self.received is not None and not self.raised:
            self.raised = True
            raise Terminated(self.received)


_signals = _Signals()


Command = Callable[[argparse.Namespace], int]


def ends_on_signals(command: Command) -> Command:
    """``command``, ending with status 128 + N when signal N arrives while it runs."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        if threading.current_thread() is not threading.main_thread():
            return command(args)  # only the main thread receives signals
        _signals.reset()
        previous = {
            number: signal.signal(number, _signals.handle)
            for number in SIGNALS
            if signal.getsignal(number) is not signal.SIG_IGN  # nohup, a background job
        }
        try:
            status = command(args)
        except Terminated as stop:
            return 128 + stop.number
        finally:
            for number, handler in previous.items():
                signal.signal(number, signal.SIG_DFL if handler is None else handler)
        return status if _signals.received is None else 128 + _signals.received

    return run


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """A wait that the first signal ends with ``Terminated`` (also one that came just before)."""
    _signals.waiting += 1
    try:
        _signals.raise_received()
        yield
    finally:
        _signals.waiting -= 1


def end_process_group(process: subprocess.Popen[bytes], number: int) -> None:
    """Pass signal ``number`` on to ``process``'s group (the process leads its own session), give
    it ``GRACE_SECONDS`` to end, then kill whatever of the group is left."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, number)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(GRACE_SECONDS)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
