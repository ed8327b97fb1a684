"""A process the program starts writes its report however it ends.

``atexit`` covers a process that ends as a script does (a spawned worker, a
``sys.exit``). Two common ends skip it, and with them a worker's transfers
would be missing from the run's report: a forked child (multiprocessing's
``fork`` and ``forkserver`` workers, a DataLoader worker) leaves through
``os._exit``, and ``Pool.terminate()``, which leaving a ``with Pool`` block
calls, ends the workers still running with SIGTERM. So ``os._exit`` writes the
report first, and so does SIGTERM before it ends the process as it would have
(unless the program handles or ignores SIGTERM itself). A SIGKILL still ends a
process without a report.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
from collections.abc import Callable
from types import FrameType
from typing import NoReturn

Finish = Callable[[], None]

_finish: Finish | None = None
_real_exit = os._exit


def report_at_every_end(finish: Finish) -> None:
    """Call ``finish`` (which writes this process's report) whichever way the process ends."""
    global _finish
    _finish = finish
    atexit.unregister(finish)  # a forked child inherits its parent's registration
    atexit.register(finish)
    os._exit = _exit_after_report
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        with contextlib.suppress(ValueError):  # only the main thread may set a handler
            signal.signal(signal.SIGTERM, _report_then_end)


def _exit_after_report(status: int) -> NoReturn:
    _write_report()
    _real_exit(status)


def _report_then_end(number: int, frame: FrameType | None) -> None:
    _write_report()
    signal.signal(number, signal.SIG_DFL)
    os.kill(os.getpid(), number)


def _write_report() -> None:
    if _finish is not None:
        with contextlib.suppress(Exception):  # the process ends regardless
            _finish()
