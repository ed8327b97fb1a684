"""DVL405: a DataParallel output meets a tensor on another GPU."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core.conflicts import wrapper_output_on_another_gpu
from devlint.rulekit.describe import clash_phrase
from devlint.core.events import Clash, Facts, ModuleCall, OperandsMeet
from devlint.diagnostic import Severity
from devlint.rule import ClashRule, RuleMeta, RuntimeExpectation


def claims(facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> bool:
    """A DataParallel output, gathered on its output device, meeting a tensor on another GPU."""
    return wrapper_output_on_another_gpu(clash)


class OutputDeviceMismatch(ClashRule):
    """## What it does
    Finds the output of an `nn.DataParallel` model (gathered on
    `output_device`, by default `device_ids[0]`) meeting a tensor moved to
    another GPU — typically the labels, moved with `.cuda()` or `"cuda:0"`
    while `device_ids=[1, 0]` or `output_device=1`.

    ## Why is this bad?
    The loss then combines tensors on two GPUs: `RuntimeError: Expected all
    tensors to be on the same device, but found at least two devices, cuda:1
    and cuda:0!`.

    ## Fix safety
    No automatic fix: move the labels to the output's device
    (`labels.to(output.device)`) or set `output_device`.

    ## References
    - [nn.DataParallel](https://pytorch.org/docs/stable/generated/torch.nn.DataParallel.html)
    """

    meta = RuleMeta(
        code="DVL405",
        name="output-device-mismatch",
        summary="a DataParallel output meets a tensor on another GPU",
        severity=Severity.ERROR,
        runtime=RuntimeExpectation(
            exception="RuntimeError",
            message="Expected all tensors to be on the same device",
            gpus=2,
        ),
    )

    owns = (claims,)
    every_clash = True
