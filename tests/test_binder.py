"""The binder's environments: rebinding a name forgets its attributes, at a cost that does
not grow with the number of other names bound (a generated module of 20,000 assignments
took minutes when every binding scanned all the others)."""

from __future__ import annotations

from devlint.core.binder import Env, join_envs
from devlint.core.values import UNKNOWN_VALUE


class CountingDict(dict):
    """A bindings dict that counts the walks over its keys."""

    walks = 0

    def __iter__(self):
        CountingDict.walks += 1
        return super().__iter__()

    def keys(self):
        CountingDict.walks += 1
        return super().keys()

    def items(self):
        CountingDict.walks += 1
        return super().items()


def test_rebinding_a_name_forgets_its_attributes_and_nothing_else() -> None:
    env = Env()
    for name in ("x", "x.a", "x.a.b", "xy", "xy.a", "y.x", "x_a"):
        env.set(name, UNKNOWN_VALUE)
    env.set("x", UNKNOWN_VALUE)
    assert sorted(env.bindings) == ["x", "x_a", "xy", "xy.a", "y.x"]
    env.set("x.a.b", UNKNOWN_VALUE)
    env.set("x.a", UNKNOWN_VALUE)
    assert "x.a.b" not in env.bindings


def test_attributes_bound_in_a_copy_narrowed_or_joined_are_forgotten_too() -> None:
    env = Env({"m": UNKNOWN_VALUE, "m.w": UNKNOWN_VALUE})  # bound when the environment was made
    branch = env.copy()
    branch.set("m.b", UNKNOWN_VALUE)
    other = env.copy()
    other.narrow("m.n", UNKNOWN_VALUE)
    other.update("m.u", UNKNOWN_VALUE)
    joined = join_envs(branch, other)
    assert joined is not None
    assert {"m.w", "m.b", "m.n", "m.u"} <= set(joined.bindings)
    joined.set("m", UNKNOWN_VALUE)
    assert sorted(joined.bindings) == ["m"]
    assert "m.w" in env.bindings  # the copies' parent is its own environment


def test_binding_does_not_walk_the_other_bindings() -> None:
    env = Env(CountingDict())
    CountingDict.walks = 0
    for index in range(20_000):
        env.set(f"x{index}", UNKNOWN_VALUE)
        env.set(f"x{index}", UNKNOWN_VALUE)
    env.set("cfg", UNKNOWN_VALUE)
    for index in range(1_000):
        env.set(f"cfg.x{index}", UNKNOWN_VALUE)
    assert CountingDict.walks == 0
