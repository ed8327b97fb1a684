"""Fewer cyclic garbage collections while files are linted.

A LibCST tree is hundreds of thousands of small container objects, and in view
of its project a lint keeps the trees of the modules it imports for later
importers. At CPython's default thresholds (700, 10, 10) the collector walks
those live trees again and again while finding almost nothing to free: the
trees are acyclic and go with their last reference. On huggingface/peft's
whole project that was a quarter of the lint (docs/performance.md). mypy runs
at the same thresholds for the same reason.

A process that hosts devlint (flake8, a program calling the engine) keeps its
own thresholds: they are raised only while devlint lints. devlint's own
processes (``devlint check``, its workers, ``devlint lsp``) only lint and keep
them raised between files too: putting them back after each file made the
collector walk the kept trees at the next allocation.
"""

from __future__ import annotations

import gc
import platform
import threading
from collections.abc import Iterator
from contextlib import contextmanager

LINTING_THRESHOLDS = (200_000, 30, 30)

_lock = threading.Lock()
_depth = 0  # lints under way: the first raises the thresholds, the last restores them
_saved: tuple[int, int, int] | None = None


def for_whole_process() -> None:
    """Raise the thresholds for good, in a process that does nothing but lint
    (call it before linting, not inside a lint)."""
    if platform.python_implementation() == "CPython":
        gc.set_threshold(*_raised(gc.get_threshold()))


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Lint at ``LINTING_THRESHOLDS``, then put the process's own back."""
    if platform.python_implementation() != "CPython":  # other collectors differ
        yield
        return
    _enter()
    try:
        yield
    finally:
        _leave()


def _raised(own: tuple[int, int, int]) -> tuple[int, int, int]:
    """Never lower than the process's own, and a collector it turned off stays off."""
    if own[0] == 0:  # a first threshold of 0 turns automatic collection off
        return own
    ours = LINTING_THRESHOLDS
    return max(own[0], ours[0]), max(own[1], ours[1]), max(own[2], ours[2])


def _enter() -> None:
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(*_raised(_saved))
        _depth += 1


def _leave() -> None:
    global _depth, _saved
    with _lock:
        _depth -= 1
        if _depth == 0 and _saved is not None:
            gc.set_threshold(*_saved)
            _saved = None
