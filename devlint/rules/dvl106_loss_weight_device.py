"""DVL106: a loss weight lives on another device than the predictions."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core import torch_api
from devlint.core.conflicts import called_module, first_per_source
from devlint.rulekit.describe import clash_phrase
from devlint.core.events import Clash, Facts, ModuleCall, OperandsMeet
from devlint.diagnostic import Severity
from devlint.rule import ClashRule, RuleMeta, RuntimeExpectation

ADVICE = (
    "move the criterion with `.to(device)` (its weight is a buffer) or create the weight on the "
    "device"
)


LOSS_WEIGHTS = frozenset({"weight", "pos_weight"})


def claims_own_weight(facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> bool:
    """The criterion itself is the cpu side: its own weight was left on the cpu."""
    module = event.module if isinstance(event, ModuleCall) else None
    qualname = called_module(event, clash)
    return clash.first is module and bool(qualname) and torch_api.is_loss(qualname)


def claims_weight_argument(facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> bool:
    """A ``weight=`` / ``pos_weight=`` argument, or a criterion that holds a weight."""
    if clash.first.role in LOSS_WEIGHTS or clash.second.role in LOSS_WEIGHTS:
        return True
    qualname = called_module(event, clash)
    return bool(qualname) and torch_api.is_loss(qualname)


class LossWeightDevice(ClashRule):
    """## What it does
    Finds `nn.CrossEntropyLoss(weight=w)`, `nn.BCEWithLogitsLoss(pos_weight=w)`,
    `nn.NLLLoss(weight=w)` … whose weight stays on the CPU (the criterion is
    never moved) while the predictions are on the GPU, and `F.cross_entropy(...,
    weight=w)` / `F.binary_cross_entropy_with_logits(..., pos_weight=w)` with a
    CPU weight.

    ## Why is this bad?
    Losses look device-free, so people move the model and the data and forget
    the criterion. A class weight is a buffer of the criterion; on the GPU the
    loss fails with `RuntimeError: Expected all tensors to be on the same
    device`.

    ## Fix safety
    No automatic fix: `criterion.to(device)`, or `weight=w.to(device)`.

    ## References
    - [nn.CrossEntropyLoss](https://pytorch.org/docs/stable/generated/torch.nn.CrossEntropyLoss.html)
    - [nn.BCEWithLogitsLoss](https://pytorch.org/docs/stable/generated/torch.nn.BCEWithLogitsLoss.html)
    """

    meta = RuleMeta(
        code="DVL106",
        name="loss-weight-device",
        summary="a loss weight lives on another device than the predictions",
        severity=Severity.ERROR,
        runtime=RuntimeExpectation(
            exception="RuntimeError", message="Expected all tensors to be on the same device"
        ),
    )

    owns = (claims_own_weight, claims_weight_argument)
    advice = ADVICE
