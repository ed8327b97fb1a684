"""``if mask is None: mask = torch.ones(...)``: the path that fills in a tensor left out.

A caller that leaves ``mask`` out (its default is None) runs the filled-in
value, so after the ``if`` that path holds it whatever the caller's path holds.
Joining a cpu tensor filled in there with the caller's tensor into "unknown"
would hide the most common form of the bug: a default mask or label built on
the cpu next to inputs on the GPU. So the join keeps the cpu tensor of the None
path when it cannot say more; the finding is then about the default call.

The same holds for any branch that makes a tensor without ``device=`` where the other
path holds something the analysis cannot place or a tensor off the cpu (``if self.wide is
not None: out = self.wide(x) else: out = torch.zeros(n)``): on that path the tensor is on
the cpu, and a clash it meets later in the function holds there. Not under a test about
devices (``use_cuda``, ``x.device.type == "cpu"``), whose paths each keep to their own
device.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from devlint.core.binder import Env
from devlint.core.lattice import CPU, is_known
from devlint.core.syntax import descendants, words_in
from devlint.core.values import NO_DEVICE, ONE_PATH, Kind, Value


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


def keep_made_without_device(
    statement: cst.If, when_true: Env, when_false: Env, joined: Env
) -> None:
    """After an ``if`` whose one path makes a tensor without ``device=`` (a cpu tensor) where
    the other holds a value of unknown place or a tensor it did not move there: the join
    keeps the cpu tensor. The caller leaves out tests about accelerators
    (``syntax.mentions_accelerator``); one naming the cpu is left out here."""
    if _names_the_cpu(statement.test):
        return
    made_here = {  # the one check every binding of a join pays: most joins have none
        name
        for env in (when_true, when_false)
        for name, value in env.bindings.items()
        if value.origin is not None and value.origin.tag == NO_DEVICE
    }
    for name in made_here:
        kept = joined.bindings.get(name)
        if kept is None or is_known(kept.device) or "." in name:  # a local, not an attribute
            continue
        yes, no = when_true.bindings.get(name), when_false.bindings.get(name)
        if yes is None or no is None:
            continue
        made = _made_without_device(yes, no, statement.body)
        if made is None and statement.orelse is not None:
            made = _made_without_device(no, yes, statement.orelse)
        if made is not None:
            joined.set(name, replace(made, ref=ONE_PATH))


def _made_without_device(made: Value, other: Value, branch: cst.CSTNode) -> Value | None:
    """``made``, when the branch made it without ``device=`` (not a value it was handed)."""
    origin = made.origin
    unplaced = other.kind is Kind.UNKNOWN or (other.kind is Kind.TENSOR and other.device != CPU)
    if other.origin is not None and other.origin.verb.startswith("moved"):
        return None  # `if flag: x = x.cuda()`: the test chooses where it lives
    if (
        made.kind is Kind.TENSOR
        and made.ref is None  # not a parameter or buffer
        and made.device == CPU
        and origin is not None
        and origin.tag == NO_DEVICE
        and unplaced
        and any(node is origin.node for node in descendants(branch))
    ):
        return made
    return None


def _names_the_cpu(test: cst.BaseExpression) -> bool:
    return any("cpu" in text.lower() for text, _ in words_in(test))
