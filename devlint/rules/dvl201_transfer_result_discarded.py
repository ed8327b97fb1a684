"""DVL201: a tensor transfer whose result is thrown away."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import libcst as cst

from devlint.core.events import DiscardedTransfer, Facts
from devlint.core.lattice import is_known
from devlint.core.syntax import dotted_name
from devlint.core.values import LOADER_BATCH
from devlint.diagnostic import Severity
from devlint.fix import ancestors, target_names
from devlint.rule import Finding, Fix, Rule, RuleMeta, RuntimeExpectation


class TransferResultDiscarded(Rule):
    """## What it does
    Finds `x.to(device)`, `x.cuda()` and `x.cpu()` on a tensor used as a bare
    statement. It stays silent where the analysis knows the tensor is already on
    the device it is moved to: the lost copy changes nothing.

    ## Why is this bad?
    `Tensor.to()` returns a new tensor and leaves the original where it was:
    the statement copies the data and throws the copy away. The tensor stays
    on its old device, and the code that follows fails or silently runs on the
    CPU. `Module.to()` moves a module in place, so `model.to(device)` is fine
    and never reported.

    ## Fix safety
    The fix assigns the result back (`x = x.to(device)`), which is what the
    statement meant. It is safe for a plain name and unsafe for an attribute
    (`self.w = self.w.to(device)` raises a `TypeError` when `w` is a registered
    parameter). It is not offered for the variable of a loop over tensors
    (`for t in [a, b]: t.to(device)`): rebinding it would move nothing.

    ## References
    - [Tensor.to](https://pytorch.org/docs/stable/generated/torch.Tensor.to.html)
    - [Module.to moves in place](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.to)
    """

    meta = RuleMeta(
        code="DVL201",
        name="transfer-result-discarded",
        summary="a tensor is moved but the moved copy is discarded",
        severity=Severity.WARNING,
        fixable=True,
        runtime=RuntimeExpectation(symptom="was never moved to the device"),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        for transfer in facts.discarded_transfers:
            if _already_there(facts, transfer):
                continue
            receiver = facts.code_of(transfer.receiver.node, limit=60)
            message = (
                f"`.{transfer.method}()` returns a new tensor and leaves `{receiver}` as it "
                f"was; assign the result (`{receiver} = {receiver}.{transfer.method}(...)`)"
            )
            yield Finding(
                transfer.node, message, self.meta.severity, partial(_fix, facts, transfer)
            )


def _already_there(facts: Facts, transfer: DiscardedTransfer) -> bool:
    """The tensor is known to be on the device it is moved to (``x = x.to(device)`` earlier,
    or a helper's ``return feats.to(device)``): the lost copy is a no-op, and nothing stays
    behind on another device."""
    moved = facts.values.get(transfer.node)
    before = transfer.receiver.value.device
    return moved is not None and is_known(before) and moved.device == before


def _fix(facts: Facts, transfer: DiscardedTransfer) -> Fix | None:
    """``x = x.to(device)``, unless ``x`` is the variable of a loop over tensors."""
    node = transfer.receiver.node
    target = dotted_name(node)
    if target is None:
        return None
    origin = transfer.receiver.value.origin
    from_loader = origin is not None and origin.tag == LOADER_BATCH
    if isinstance(node, cst.Name) and not from_loader:
        for loop in ancestors(facts, transfer.node):
            if isinstance(loop, cst.For) and node.value in _names(loop.target):
                return None
    call = facts.module.code_for_node(transfer.node)
    safe = isinstance(node, cst.Name)
    return Fix(transfer.node, f"{target} = {call}", f"Assign the result to `{target}`", safe)


def _names(target: cst.BaseExpression) -> set[str]:
    return {name.value for name in target_names(target)}
