"""Bindings along one control-flow path, and how paths join at merge points.

An ``Env`` maps names and dotted attribute paths (``self.model``) to values.
``None`` stands for an unreachable path (after ``return``, ``raise``,
``continue``): it contributes nothing when paths join.

``splits`` remember, for a name joined after ``if flag:``, what it held on
each side, so that a later ``if flag:`` on the unchanged flag takes the
matching side back instead of the join (see ``devlint.core.flags``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from devlint.core.flags import Flag
from devlint.core.values import Value, join_values


@dataclass(frozen=True, eq=False, slots=True)
class Split:
    """``joined`` was ``when_true`` where ``key`` held and ``when_false`` where it did not.

    ``stamp`` is what the flag's names were bound to then: the split is stale once
    one is rebound, and once the name no longer holds ``joined``. ``earlier`` is the split
    of an earlier ``if`` whose join one side still held (``if distributed: m = DDP(m)``,
    then ``if fuse: m = fuse(m)``): where a test takes that side, the earlier split holds
    again (``assert not fuse and not distributed`` leaves the model unwrapped).
    """

    key: str
    stamp: tuple[Value | None, ...]
    joined: Value
    when_true: Value
    when_false: Value
    earlier: Split | None = None
    names: tuple[str, ...] = ()  # the flag's (``Flag.names``), which ``stamp`` follows

    @property
    def sides(self) -> tuple[Value, Value]:
        return self.when_true, self.when_false


@dataclass(frozen=True, eq=False, slots=True)
class Narrowing:
    """A name a branch test narrowed: ``before`` outside the branch, ``after`` inside it."""

    name: str
    before: Value | None
    after: Value
    split: Split | None = None


class Attributes:
    """The dotted names ever bound under each name (``x`` → ``x.a``, ``x.a.b``), so that
    rebinding ``x`` finds what to forget without scanning every binding: a module of
    20,000 assignments would otherwise cost time quadratic in its length.

    Only ever added to, so it may name more than an environment binds: one index is
    shared by an environment and its copies, and forgetting a name not bound is a no-op.
    """

    __slots__ = ("_under",)

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._under: dict[str, set[str]] = {}
        for name in names:
            self.add(name)

    def add(self, name: str) -> None:
        dot = name.find(".")
        while dot != -1:
            self._under.setdefault(name[:dot], set()).add(name)
            dot = name.find(".", dot + 1)

    def under(self, name: str) -> Iterable[str]:
        return self._under.get(name, ())

    def merged(self, other: Attributes) -> Attributes:
        if other is self:
            return self
        merged = Attributes()
        for index in (self, other):
            for name, names in index._under.items():
                merged._under.setdefault(name, set()).update(names)
        return merged


class Env:
    """Bindings of one scope on one path; ``parent`` is the enclosing scope (read only)."""

    __slots__ = ("attributes", "bindings", "parent", "splits")

    def __init__(
        self,
        bindings: dict[str, Value] | None = None,
        parent: Env | None = None,
        splits: dict[str, Split] | None = None,
        attributes: Attributes | None = None,
    ):
        self.bindings = bindings if bindings is not None else {}
        self.parent = parent
        self.splits = splits if splits is not None else {}
        if attributes is None:
            attributes = Attributes(name for name in self.bindings if "." in name)
        self.attributes = attributes

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
        for key in self.attributes.under(name):
            bindings.pop(key, None)
        self._bind(name, value)

    def update(self, name: str, value: Value) -> None:
        """Change ``name`` in place (a module moved by ``.to()``): its attributes stay."""
        self._bind(name, value)

    def _bind(self, name: str, value: Value) -> None:
        if "." in name and name not in self.bindings:
            self.attributes.add(name)
        self.bindings[name] = value

    def update_aliases(self, before: Value, after: Value) -> None:
        """Names of this scope bound to the very object ``before`` (``policy = model``) now
        hold ``after``: what changed in place changed for every name of it."""
        for name, value in self.bindings.items():
            if value is before:
                self.bindings[name] = after

    def delete(self, name: str) -> None:
        self.bindings.pop(name, None)

    def copy(self) -> Env:
        return Env(dict(self.bindings), self.parent, dict(self.splits), self.attributes)

    def stamp(self, flag: Flag) -> tuple[Value | None, ...]:
        """What the names a flag reads are bound to on this path."""
        return self.stamp_of(flag.names)

    def stamp_of(self, names: tuple[str, ...]) -> tuple[Value | None, ...]:
        return tuple(self.get(name) for name in names)

    def take_split(self, name: str, value: Value, split: Split) -> None:
        """Bind ``name`` to ``value``, which is ``split``'s join as of here (an attribute
        ``__init__`` split on a flag of self, at the start of a method)."""
        self._bind(name, value)
        stamp = self.stamp_of(split.names)
        self.splits[name] = replace(split, stamp=stamp, joined=value, earlier=None)

    def narrow(self, name: str, value: Value) -> Narrowing:
        """Bind ``name`` to what a branch test says it is inside the branch."""
        narrowing = Narrowing(name, self.get(name), value, self.splits.pop(name, None))
        self._bind(name, value)
        earlier = narrowing.split.earlier if narrowing.split is not None else None
        if earlier is not None and earlier.joined is value:
            self.splits[name] = earlier
        return narrowing

    def widen(self, narrowings: list[Narrowing]) -> None:
        """Leaving the branch: a narrowed name the branch did not rebind is what it was before
        (the last narrowing first: two parts of a test may narrow one name)."""
        for narrowing in reversed(narrowings):
            name = narrowing.name
            if self.bindings.get(name) is narrowing.after and narrowing.before is not None:
                self.bindings[name] = narrowing.before
                if narrowing.split is not None:
                    self.splits[name] = narrowing.split

    def refine(self, flag: Flag, holds: bool) -> list[Narrowing]:
        """On a path where ``flag`` is known to hold (or not), names split on it take that side."""
        stamp = self.stamp(flag)
        return [
            self.narrow(name, split.when_true if holds else split.when_false)
            for name, split in list(self.splits.items())
            if split.key == flag.key and _valid(self, name, split) and _same(split.stamp, stamp)
        ]

    def record_split(self, flag: Flag, when_true: Env, when_false: Env) -> None:
        """After ``if flag:`` joined into this env: remember each name's two sides."""
        stamp = when_true.stamp(flag)
        if not _same(stamp, when_false.stamp(flag)):
            return  # a branch rebound the flag: the sides no longer follow it
        for name, joined in self.bindings.items():
            yes, no = when_true.bindings.get(name), when_false.bindings.get(name)
            if yes is not None and no is not None and yes is not no:
                earlier = _held(when_true, name, yes) or _held(when_false, name, no)
                self.splits[name] = Split(flag.key, stamp, joined, yes, no, earlier, flag.names)


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
    splits = _join_splits(a, b, joined, guarded)
    return Env(joined, a.parent, splits, a.attributes.merged(b.attributes))


def _join_splits(a: Env, b: Env, joined: dict[str, Value], guarded: bool) -> dict[str, Split]:
    """Splits both paths agree on (same flag, same stamp), with their sides joined; a split on
    one path whose value the join kept as it is (the other path held ``None``) stays."""
    splits: dict[str, Split] = {}
    for name in a.splits.keys() | b.splits.keys():
        mine, theirs = a.splits.get(name), b.splits.get(name)
        if mine is None or theirs is None:
            kept = mine or theirs
            if kept is not None and joined.get(name) is kept.joined:
                splits[name] = kept
            continue
        if not (_valid(a, name, mine) and _valid(b, name, theirs)):
            continue
        if mine is theirs:  # held whole on both paths: its join is itself
            splits[name] = mine
            continue
        if mine.key != theirs.key or not _same(mine.stamp, theirs.stamp):
            continue
        splits[name] = Split(
            mine.key,
            mine.stamp,
            joined[name],
            join_values(mine.when_true, theirs.when_true, guarded=guarded),
            join_values(mine.when_false, theirs.when_false, guarded=guarded),
            names=mine.names,
        )
    return splits


def attribute_splits(env: Env, owner: str) -> dict[str, Split]:
    """The splits of ``owner.<name>`` bindings still current at the end of a path, on flags
    that read only ``owner`` and its attributes (``if self.dp: self.net = DataParallel(...)``):
    what a method of the class testing the same flag may take back."""
    prefix = owner + "."
    found = {}
    for key, split in env.splits.items():
        name = key[len(prefix) :] if key.startswith(prefix) else ""
        if not name or "." in name or not _valid(env, key, split):
            continue
        of_owner = all(n == owner or n.startswith(prefix) for n in split.names)
        if split.names and of_owner and _same(split.stamp, env.stamp_of(split.names)):
            found[name] = split
    return found


def _held(env: Env, name: str, value: Value) -> Split | None:
    """The split of ``name`` on a path where it still holds that split's join."""
    split = env.splits.get(name)
    return split if split is not None and split.joined is value else None


def _valid(env: Env, name: str, split: Split) -> bool:
    return env.bindings.get(name) is split.joined


def _same(a: tuple[Value | None, ...], b: tuple[Value | None, ...]) -> bool:
    return all(x is y for x, y in zip(a, b, strict=True))


def attributes_of(env: Env, owner: str) -> list[tuple[str, Value]]:
    """``owner.<name>`` bindings of an environment's own scope: what a method set on self."""
    prefix = owner + "."
    return [
        (key[len(prefix) :], value)
        for key, value in env.bindings.items()
        if key.startswith(prefix) and "." not in key[len(prefix) :]
    ]
