"""``devlint check --jobs N``: lint or fix files in worker processes, and survive their deaths.

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
from dataclasses import dataclass
from functools import partial
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Generic, TypeVar

from devlint.config import Settings
from devlint.diagnostic import Diagnostic
from devlint.inputs.result_cache import LintFile, ResultCache, lint_file_cached
from devlint.notices import INTERNAL_ERROR, notice
from devlint.running import gc_thresholds
from devlint.running.memory import release_freed_memory

T = TypeVar("T")

IN_PROCESS_BELOW = 16
"""Fewer files than this are handled in-process: starting workers costs more."""
MAX_CHUNK = 64
MAX_WORKER_DEATHS = 16
"""After this many workers died on files alone, the files not yet tried get a notice."""


def lint_files(
    files: list[Path],
    settings: Settings,
    jobs: int,
    results: ResultCache | None,
    lint: LintFile,
) -> list[Diagnostic]:
    """The diagnostics of ``files``, each linted by ``lint``, in ``jobs`` processes.

    ``lint`` must be picklable (a module-level function): see ``map_files``.
    """
    cached: list[Diagnostic] = []
    if results is not None:  # only the files the cache does not know go to workers
        cached, files = results.lookup(files)
    one = partial(_lint_one, settings=settings, results=results, lint=lint)
    linted = map_files(one, files, jobs, lambda path, died: [died], doing="linting", done="linted")
    return cached + [d for diagnostics in linted for d in diagnostics]


def _lint_one(
    path: Path, settings: Settings, results: ResultCache | None, lint: LintFile
) -> list[Diagnostic]:
    if results is None:
        return guarded(str(path), lambda: lint(path, settings).diagnostics)
    return guarded(str(path), partial(lint_file_cached, path, settings, results, lint))


def map_files(
    work: Callable[[Path], T],
    files: list[Path],
    jobs: int,
    lost: Callable[[Path, Diagnostic], T],
    *,
    doing: str,
    done: str,
) -> list[T]:
    """``work(path)`` for each of ``files``, in their order, in ``jobs`` worker processes.

    ``work`` must be picklable (a module-level function or a ``partial`` of
    one): it is sent to the workers by name, whatever the start method. A
    file whose worker died, or that was given up on, stands as
    ``lost(path, notice)``, the notice a DVL003 saying so in words built
    from ``doing`` ("linting") and ``done`` ("linted").
    """
    if jobs == 1 or len(files) < IN_PROCESS_BELOW:
        return _run_chunk(work, files)
    results, unfinished = _run_in_pool(work, files, jobs)
    if unfinished:
        results.update(_run_alone(work, files, unfinished, jobs, _Loss(lost, doing, done)))
    return [results[index] for index in range(len(files))]


def _run_in_pool(
    work: Callable[[Path], T], files: list[Path], jobs: int
) -> tuple[dict[int, T], list[int]]:
    """``work`` over ``files`` in chunks in a process pool: the results of the chunks
    that came back, by file index, and the indexes of the files of those that did not.

    When a worker dies (a crash in LibCST's parser, the OOM killer) the pool
    breaks and every chunk not yet returned fails with it, the dead worker's
    and the others' alike: those files are the ones to try again, alone.
    """
    size = max(1, min(MAX_CHUNK, len(files) // (jobs * 4)))
    chunks = [range(start, min(start + size, len(files))) for start in range(0, len(files), size)]
    results: dict[int, T] = {}
    unfinished: list[int] = []
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=start_worker)
    try:
        futures: list[tuple[Future[list[T]] | None, range]] = []
        for chunk in chunks:
            try:
                future = pool.submit(_run_chunk, work, files[chunk.start : chunk.stop])
            except BrokenProcessPool:  # broke while the chunks were being sent
                future = None
            futures.append((future, chunk))
        for future, chunk in futures:
            try:
                if future is None:
                    raise BrokenProcessPool
                results.update(zip(chunk, future.result(), strict=True))
            except Exception:  # BrokenProcessPool, or a chunk that could not be sent or returned
                unfinished += chunk
    finally:
        pool.shutdown(cancel_futures=True)
    return results, unfinished


def start_worker() -> None:
    """Workers leave Ctrl-C to the main process, which stops them without tracebacks,
    and lint at devlint's collector thresholds (set again: a spawned worker starts
    at Python's)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc_thresholds.for_whole_process()


def _run_chunk(work: Callable[[Path], T], files: list[Path]) -> list[T]:
    results = [work(path) for path in files]
    release_freed_memory()
    return results


@dataclass(frozen=True)
class _Loss(Generic[T]):
    """What stands for a file ``_run_alone`` got no result for: ``lost`` of a DVL003 notice."""

    lost: Callable[[Path, Diagnostic], T]
    doing: str
    done: str

    def died(self, path: Path, how: str) -> T:
        message = f"the worker process died while {self.doing} this file ({how})"
        return self._notice(path, message)

    def given_up(self, path: Path, deaths: int) -> T:
        message = (
            f"not {self.done}: {deaths} worker processes died or failed to start"
            " on other files, so devlint stopped retrying (out of memory?)"
        )
        return self._notice(path, message)

    def _notice(self, path: Path, message: str) -> T:
        return self.lost(path, notice(str(path), INTERNAL_ERROR, f"internal error: {message}"))


def _run_alone(
    work: Callable[[Path], T], files: list[Path], indexes: list[int], jobs: int, loss: _Loss[T]
) -> dict[int, T]:
    """``work`` once more over the files at ``indexes``, in worker processes that take
    one file at a time.

    Up to ``jobs`` workers run at once; each is given its next file only when it
    has returned the last, so a worker that dies names the one file that killed
    it. That file's result is a loss (nothing of it is cached: the worker died
    before storing anything) and a fresh worker takes over. Every file is tried
    alone once, so each death costs one process start; after
    ``MAX_WORKER_DEATHS`` deaths or failures to start one (out of memory, say)
    the files not yet tried are losses too.
    """
    context = multiprocessing.get_context()  # ProcessPoolExecutor's default too
    waiting = deque(indexes)
    results: dict[int, T] = {}
    idle: list[_Solo] = []
    busy: dict[Connection, tuple[_Solo, int]] = {}
    deaths = 0
    try:
        while busy or (waiting and deaths < MAX_WORKER_DEATHS):
            while waiting and deaths < MAX_WORKER_DEATHS and len(busy) < jobs:
                try:
                    solo = idle.pop() if idle else _Solo(context, work)
                except OSError:  # none can be started (out of memory or processes)
                    deaths += 1
                    break
                index = waiting.popleft()
                try:
                    solo.connection.send(files[index])
                except OSError:  # it died idle (the OOM killer?): not this file's doing
                    deaths += 1
                    solo.stop()
                    waiting.appendleft(index)
                    continue
                busy[solo.connection] = (solo, index)
            for connection in wait(list(busy)) if busy else ():
                solo, index = busy.pop(connection)
                try:
                    results[index] = solo.connection.recv()
                    idle.append(solo)
                except (EOFError, OSError):  # it died: this file killed it
                    deaths += 1
                    results[index] = loss.died(files[index], solo.death())
    except BaseException:  # Ctrl-C (or a bug here): stop the workers mid-file
        for solo, _ in busy.values():
            solo.process.terminate()
        raise
    finally:
        for solo in [*idle, *(solo for solo, _ in busy.values())]:
            solo.stop()
    results.update((index, loss.given_up(files[index], deaths)) for index in waiting)
    return results


class _Solo:
    """One of ``_run_alone``'s worker processes, and the pipe it takes files from."""

    def __init__(
        self, context: multiprocessing.context.BaseContext, work: Callable[[Path], object]
    ) -> None:
        self.connection, theirs = context.Pipe()
        self.process = context.Process(target=_solo_worker, args=(theirs, work), daemon=True)
        self.process.start()
        theirs.close()  # the worker holds the only copy: its death is an end of file here

    def death(self) -> str:
        """How the worker died, once it did (it is reaped here): "killed by SIGSEGV"."""
        self.stop()
        code = self.process.exitcode
        if code is not None and code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit status {code}"

    def stop(self) -> None:
        """Tell the worker to return (a dead one cannot hear it), and wait for it."""
        with contextlib.suppress(OSError):
            self.connection.send(None)
        self.connection.close()
        self.process.join()


def _solo_worker(connection: Connection, work: Callable[[Path], object]) -> None:
    start_worker()
    with connection:
        while (path := connection.recv()) is not None:
            connection.send(work(path))
            release_freed_memory()


def guarded(name: str, lint: Callable[[], list[Diagnostic]]) -> list[Diagnostic]:
    """``lint()``, with any failure turned into a DVL003 notice naming the file."""
    try:
        return lint()
    except Exception as error:  # one bad file must not stop the run
        message = f"internal error: {type(error).__name__}: {error}"
        return [notice(name, INTERNAL_ERROR, message)]
