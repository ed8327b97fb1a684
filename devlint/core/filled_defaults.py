"""``if mask is None: mask = torch.ones(...)``: the path that fills in a tensor left out.

A caller that leaves ``mask`` out (its default is None) runs the filled-in
value, so after the ``if`` that path holds it whatever the caller's path holds.
Joining a cpu tensor filled in there with the caller's tensor into "unknown"
would hide the most common form of the bug: a default mask or label built on
the cpu next to inputs on the GPU. So the join keeps the cpu tensor of the None
path when it cannot say more; the finding is then about the default call.
"""

from __future__ import annotations

import libcst as cst

from devlint.core.binder import Env
from devlint.core.lattice import CPU, is_known
from devlint.core.values import Kind, Value


def _none_test(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """For ``name is None`` / ``name is not None``: the name and whether the test holds
    on its None path. None for any other test."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    comparison = test.comparisons[0]
    operator = comparison.operator
    if not (
        isinstance(test.left, cst.Name)
        and isinstance(comparison.comparator, cst.Name)
        and comparison.comparator.value == "None"
        and isinstance(operator, cst.Is | cst.IsNot)
    ):
        return None
    return test.left.value, isinstance(operator, cst.Is)


def filled_default(test: cst.BaseExpression, when_true: Value, when_false: Value) -> Value | None:
    """The cpu tensor the None path of ``test`` filled in, or None when there is none."""
    tested = _none_test(test)
    return None if tested is None else _cpu_tensor_of(tested[1], when_true, when_false)


def keep_filled_default(
    test: cst.BaseExpression, when_true: Env, when_false: Env, joined: Env
) -> None:
    """After ``if name is None: name = <cpu tensor>`` joined into ``joined``: ``name`` holds
    the cpu tensor where the join lost its device."""
    tested = _none_test(test)
    if tested is None:
        return
    name, none_path_is_true = tested
    yes, no, kept = when_true.get(name), when_false.get(name), joined.get(name)
    if yes is None or no is None or kept is None or is_known(kept.device):
        return
    filled = _cpu_tensor_of(none_path_is_true, yes, no)
    if filled is not None:
        joined.set(name, filled)


def _cpu_tensor_of(none_path_is_true: bool, when_true: Value, when_false: Value) -> Value | None:
    """The None path's value, when it is a cpu tensor."""
    filled = when_true if none_path_is_true else when_false
    return filled if filled.kind is Kind.TENSOR and filled.device == CPU else None
