"""``devlint check --jobs N``: lint files in worker processes, and survive their deaths.

Files go to a process pool in chunks. A worker that dies (a crash in
LibCST's native parser, the OOM killer) breaks the whole pool, so the files
whose results did not come back are tried again, each alone in a worker of
its own: only a file that really kills its worker gets a DVL003 notice.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from multiprocessing.connection import Connection, wait
from pathlib import Path

from devlint.cache import LintFile, ResultCache, lint_file_cached
from devlint.config import Settings
from devlint.diagnostic import Diagnostic
from devlint.memory import release_freed_memory
from devlint.notices import INTERNAL_ERROR, notice

IN_PROCESS_BELOW = 16
"""Fewer files than this are linted in-process: starting workers costs more."""
MAX_CHUNK = 64
MAX_WORKER_DEATHS = 16
"""After this many workers died linting files alone, the files not yet tried get a notice."""


def lint_files(
    files: list[Path],
    settings: Settings,
    jobs: int,
    results: ResultCache | None,
    lint: LintFile,
) -> list[Diagnostic]:
    """The diagnostics of ``files``, each linted by ``lint``, in ``jobs`` processes.

    ``lint`` must be picklable (a module-level function): it is sent to the
    workers by name, whatever the start method.
    """
    cached: list[Diagnostic] = []
    if results is not None:  # only the files the cache does not know go to workers
        cached, files = results.lookup(files)
    if jobs == 1 or len(files) < IN_PROCESS_BELOW:
        return cached + _lint_chunk(files, settings, results, lint)
    diagnostics, unfinished = _lint_in_pool(files, settings, jobs, results, lint)
    if unfinished:
        diagnostics += _lint_alone(unfinished, settings, jobs, results, lint)
    return cached + diagnostics


def _lint_in_pool(
    files: list[Path],
    settings: Settings,
    jobs: int,
    results: ResultCache | None,
    lint: LintFile,
) -> tuple[list[Diagnostic], list[Path]]:
    """Lint ``files`` in chunks in a process pool: the diagnostics of the chunks that
    came back, and the files of those that did not.

    When a worker dies (a crash in LibCST's parser, the OOM killer) the pool
    breaks and every chunk not yet returned fails with it, the dead worker's
    and the others' alike: those files are the ones to try again, alone.
    """
    size = max(1, min(MAX_CHUNK, len(files) // (jobs * 4)))
    chunks = [files[start : start + size] for start in range(0, len(files), size)]
    diagnostics: list[Diagnostic] = []
    unfinished: list[Path] = []
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=ignore_interrupts)
    try:
        futures: list[tuple[Future[list[Diagnostic]] | None, list[Path]]] = []
        for chunk in chunks:
            try:
                futures.append((pool.submit(_lint_chunk, chunk, settings, results, lint), chunk))
            except BrokenProcessPool:  # broke while the chunks were being sent
                futures.append((None, chunk))
        for future, chunk in futures:
            try:
                if future is None:
                    raise BrokenProcessPool
                diagnostics += future.result()
            except Exception:  # BrokenProcessPool, or a chunk that could not be sent or returned
                unfinished += chunk
    finally:
        pool.shutdown(cancel_futures=True)
    return diagnostics, unfinished


def ignore_interrupts() -> None:
    """Workers leave Ctrl-C to the main process, which stops them without tracebacks."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _lint_chunk(
    files: list[Path], settings: Settings, results: ResultCache | None, lint: LintFile
) -> list[Diagnostic]:
    if results is None:
        one = partial(lint, settings=settings)
    else:
        one = partial(lint_file_cached, settings=settings, results=results, lint=lint)
    diagnostics = [d for path in files for d in guarded(str(path), partial(one, path))]
    release_freed_memory()
    return diagnostics


def _lint_alone(
    files: list[Path],
    settings: Settings,
    jobs: int,
    results: ResultCache | None,
    lint: LintFile,
) -> list[Diagnostic]:
    """Lint each file once more, in worker processes that take one file at a time.

    Up to ``jobs`` workers run at once; each is given its next file only when it
    has returned the last, so a worker that dies names the one file that killed
    it. That file gets a DVL003 notice (nothing of it is cached: the worker died
    before storing anything) and a fresh worker takes over. Every file is tried
    alone once, so each death costs one process start; after
    ``MAX_WORKER_DEATHS`` deaths or failures to start one (out of memory, say)
    the files not yet tried get a notice instead.
    """
    context = multiprocessing.get_context()  # ProcessPoolExecutor's default too
    waiting = deque(files)
    diagnostics: list[Diagnostic] = []
    idle: list[_Solo] = []
    busy: dict[Connection, tuple[_Solo, Path]] = {}
    deaths = 0
    try:
        while busy or (waiting and deaths < MAX_WORKER_DEATHS):
            while waiting and deaths < MAX_WORKER_DEATHS and len(busy) < jobs:
                try:
                    solo = idle.pop() if idle else _Solo(context, settings, results, lint)
                except OSError:  # none can be started (out of memory or processes)
                    deaths += 1
                    break
                path = waiting.popleft()
                try:
                    solo.connection.send(path)
                except OSError:  # it died idle (the OOM killer?): not this file's doing
                    deaths += 1
                    solo.stop()
                    waiting.appendleft(path)
                    continue
                busy[solo.connection] = (solo, path)
            for connection in wait(list(busy)) if busy else ():
                solo, path = busy.pop(connection)
                try:
                    diagnostics += solo.connection.recv()
                    idle.append(solo)
                except (EOFError, OSError):  # it died: ``path`` killed it
                    deaths += 1
                    diagnostics.append(notice(str(path), INTERNAL_ERROR, solo.death()))
    except BaseException:  # Ctrl-C (or a bug here): stop the workers mid-file
        for solo, _ in busy.values():
            solo.process.terminate()
        raise
    finally:
        for solo in [*idle, *(solo for solo, _ in busy.values())]:
            solo.stop()
    message = (
        f"internal error: not linted: {deaths} worker processes died or failed to start"
        " on other files, so devlint stopped retrying (out of memory?)"
    )
    return diagnostics + [notice(str(path), INTERNAL_ERROR, message) for path in waiting]


class _Solo:
    """One of ``_lint_alone``'s worker processes, and the pipe it takes files from."""

    def __init__(
        self,
        context: multiprocessing.context.BaseContext,
        settings: Settings,
        results: ResultCache | None,
        lint: LintFile,
    ) -> None:
        self.connection, theirs = context.Pipe()
        self.process = context.Process(
            target=_solo_worker, args=(theirs, settings, results, lint), daemon=True
        )
        self.process.start()
        theirs.close()  # the worker holds the only copy: its death is an end of file here

    def death(self) -> str:
        """The notice's message, once the worker died (it is reaped here)."""
        self.stop()
        code = self.process.exitcode
        if code is not None and code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exit status {code}"
        return f"internal error: the worker process died while linting this file ({how})"

    def stop(self) -> None:
        """Tell the worker to return (a dead one cannot hear it), and wait for it."""
        with contextlib.suppress(OSError):
            self.connection.send(None)
        self.connection.close()
        self.process.join()


def _solo_worker(
    connection: Connection, settings: Settings, results: ResultCache | None, lint: LintFile
) -> None:
    ignore_interrupts()
    with connection:
        while (path := connection.recv()) is not None:
            connection.send(_lint_chunk([path], settings, results, lint))


def guarded(name: str, lint: Callable[[], list[Diagnostic]]) -> list[Diagnostic]:
    """``lint()``, with any failure turned into a DVL003 notice naming the file."""
    try:
        return lint()
    except Exception as error:  # one bad file must not stop the run
        message = f"internal error: {type(error).__name__}: {error}"
        return [notice(name, INTERNAL_ERROR, message)]
