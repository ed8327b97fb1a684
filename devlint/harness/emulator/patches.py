"""Attribute patches that can be undone, so tests can emulate CUDA inside one process."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

_MISSING = object()


@dataclass
class Patches:
    _undo: list[Callable[[], None]] = field(default_factory=list)

    def set(self, owner: object, name: str, value: object) -> None:
        saved = vars(owner).get(name, _MISSING)
        setattr(owner, name, value)
        self._undo.append(lambda: _put_back(owner, name, saved))

    def defer(self, undo: Callable[[], None]) -> None:
        """Run ``undo`` when the patches are restored."""
        self._undo.append(undo)

    def restore(self) -> None:
        while self._undo:
            self._undo.pop()()


def _put_back(owner: object, name: str, saved: object) -> None:
    if saved is _MISSING:
        delattr(owner, name)
    else:
        setattr(owner, name, saved)
