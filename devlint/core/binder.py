"""Bindings along one control-flow path, and how paths join at merge points.

An ``Env`` maps names and dotted attribute paths (``self.model``) to values.
``None`` stands for an unreachable path (after ``return``, ``raise``,
``continue``): it contributes nothing when paths join.
"""

from __future__ import annotations

from devlint.core.values import Value, join_values


class Env:
    """Bindings of one scope on one path; ``parent`` is the enclosing scope (read only)."""

    __slots__ = ("bindings", "parent")

    def __init__(self, bindings: dict[str, Value] | None = None, parent: Env | None = None):
        self.bindings = bindings if bindings is not None else {}
        self.parent = parent

    def get(self, name: str) -> Value | None:
        env: Env | None = self
        while env is not None:
            value = env.bindings.get(name)
            if value is not None:
                return value
            env = env.parent
        return None

    def set(self, name: str, value: Value) -> None:
        """Bind ``name``; rebinding ``x`` forgets what was known about ``x.attr``."""
        bindings = self.bindings
        if name in bindings or any(key.startswith(name + ".") for key in bindings):
            prefix = name + "."
            for key in [key for key in bindings if key.startswith(prefix)]:
                del bindings[key]
        bindings[name] = value

    def update(self, name: str, value: Value) -> None:
        """Change ``name`` in place (a module moved by ``.to()``): its attributes stay."""
        self.bindings[name] = value

    def delete(self, name: str) -> None:
        self.bindings.pop(name, None)

    def copy(self) -> Env:
        return Env(dict(self.bindings), self.parent)


def join_envs(a: Env | None, b: Env | None, *, guarded: bool = False) -> Env | None:
    """Join two paths; a name bound on one path only keeps that path's value."""
    if a is None:
        return b
    if b is None:
        return a
    joined = dict(a.bindings)
    for name, value in b.bindings.items():
        mine = joined.get(name)
        joined[name] = value if mine is None else join_values(mine, value, guarded=guarded)
    return Env(joined, a.parent)
