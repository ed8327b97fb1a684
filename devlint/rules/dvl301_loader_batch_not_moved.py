"""DVL301: a DataLoader batch used on a device without being moved there."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import libcst as cst

from devlint.core.conflicts import first_per_source, source_tag
from devlint.rulekit.describe import operand_phrase, they_meet, when_it_fails
from devlint.core.events import Clash, Facts, ModuleCall, OperandsMeet
from devlint.core.lattice import Concrete, Symbol, can_be_accelerator
from devlint.core.syntax import dotted_name
from devlint.core.values import LOADER_BATCH, Kind
from devlint.diagnostic import Severity
from devlint.rulekit.fixes import ancestors, is_bound_at, receiver_text
from devlint.rule import ClashRule, Finding, Fix, RuleMeta, RuntimeExpectation

_DEVICE_VALUES = frozenset({Kind.DEVICE, Kind.STRING, Kind.SCALAR})


def claims(facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> bool:
    """A DataLoader batch (or an element of one) that was never moved."""
    return source_tag(clash) == LOADER_BATCH


class LoaderBatchNotMoved(ClashRule):
    """## What it does
    Finds a batch from a `DataLoader` (a tuple, list or dict batch, through
    `enumerate`, `zip`, `tqdm`, `iter`/`next` …) that reaches a model, a loss or
    a tensor operation on another device without `.to(device)`.

    ## Why is this bad?
    A DataLoader collates CPU tensors unless its dataset produces device
    tensors. Forgetting to move one element of the batch (often the labels)
    fails with `RuntimeError: Expected all tensors to be on the same device`
    on a GPU machine — and works on the laptop where the code was written.

    A batch moved by a helper in the same file counts as moved. Framework hooks
    such as Lightning's `training_step(self, batch, batch_idx)`, where the
    framework moves the batch, are not reported.

    ## Fix safety
    Safe: the fix moves the batch element where it is used to the device the
    other side was moved to or created on (`criterion(model(x), y)` →
    `criterion(model(x), y.to(device))`). It is offered when that device is a
    literal or a variable that holds a value at the use; moving the whole batch
    once at the top of the loop (`x, y = x.to(device), y.to(device)`) is
    equivalent and left to you.

    ## References
    - [torch.utils.data](https://pytorch.org/docs/stable/data.html)
    - [Memory pinning and non_blocking transfers](https://pytorch.org/docs/stable/data.html#memory-pinning)
    """

    meta = RuleMeta(
        code="DVL301",
        name="loader-batch-not-moved",
        summary="a DataLoader batch is used on a device without being moved there",
        severity=Severity.ERROR,
        fixable=True,
        runtime=RuntimeExpectation(
            exception="RuntimeError", message="Expected all tensors to be on the same device"
        ),
    )

    owns = (claims,)

    def finding(self, facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> Finding:
        """At the batch, where its fix goes; a batch as another file's code holds it is
        reported at the call that hands it over."""
        batch, other = clash.first, clash.second
        message = (
            operand_phrase(facts, batch)
            + " and was never moved, but "
            + operand_phrase(facts, other)
            + they_meet(facts, clash)
            + when_it_fails(clash)
        )
        if facts.is_here(batch.node):
            return Finding(batch.node, message, clash.severity, partial(_fix, facts, clash))
        return Finding(event.node, message, clash.severity)


def _fix(facts: Facts, clash: Clash) -> Fix | None:
    """``y`` → ``y.to(device)``, with the device the other side was placed with."""
    batch = clash.first.node
    parent = next(ancestors(facts, batch), None)
    if isinstance(parent, cst.AugAssign | cst.AssignTarget):
        return None  # `x += y`: an assignment target cannot become `x.to(device)`
    if isinstance(parent, cst.Arg) and parent.star:
        return None  # `model(**batch)`: a dict of tensors has no `.to()`
    device = _device_text(facts, clash, batch)
    if device is None:
        return None
    moved = f"{receiver_text(facts, batch)}.to({device})"
    return Fix(batch, moved, f"Move `{facts.code_of(batch)}` to {device}")


def _device_text(facts: Facts, clash: Clash, at: cst.CSTNode) -> str | None:
    """Source text naming the other side's device that is valid at ``at``."""
    other = clash.second.value
    subject = other.origin.subject if other.origin is not None else None
    if subject is not None and "{}" in other.origin.verb:
        value = facts.value_of(subject)
        if isinstance(subject, cst.SimpleString):
            return facts.module.code_for_node(subject)
        name = dotted_name(subject)
        if value is not None and value.kind in _DEVICE_VALUES and _visible(facts, name, at):
            return name
    device = other.device
    if isinstance(device, Concrete) and can_be_accelerator(device):
        return f'"{device.describe()}"'
    if isinstance(device, Symbol) and device.accel and _visible(facts, device.name, at):
        return device.name
    return None


def _visible(facts: Facts, name: str | None, at: cst.CSTNode) -> bool:
    valid = name is not None and all(part.isidentifier() for part in name.split("."))
    return valid and is_bound_at(facts, name.split(".", 1)[0], at)
