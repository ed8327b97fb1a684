"""DVL201: a tensor transfer whose result is thrown away."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core.events import Facts
from devlint.core.syntax import dotted_name
from devlint.diagnostic import Severity
from devlint.rule import Finding, Fix, Rule, RuleMeta, RuntimeExpectation


class TransferResultDiscarded(Rule):
    """## What it does
    Finds `x.to(device)`, `x.cuda()` and `x.cpu()` on a tensor used as a bare
    statement.

    ## Why is this bad?
    `Tensor.to()` returns a new tensor and leaves the original where it was:
    the statement copies the data and throws the copy away. The tensor stays
    on its old device, and the code that follows fails or silently runs on the
    CPU. `Module.to()` moves a module in place, so `model.to(device)` is fine
    and never reported.

    ## Fix safety
    Safe: the fix assigns the result back (`x = x.to(device)`), which is what
    the statement meant; it is offered only when `x` is a plain name or
    attribute.

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
        runtime=RuntimeExpectation(symptom="the tensor is still on the cpu after the move"),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        for transfer in facts.discarded_transfers:
            receiver = facts.code_of(transfer.receiver.node, limit=60)
            target = dotted_name(transfer.receiver.node)
            fix = None
            if target is not None:
                call = facts.module.code_for_node(transfer.node)
                fix = Fix(transfer.node, f"{target} = {call}", f"Assign the result to `{target}`")
            message = (
                f"`.{transfer.method}()` returns a new tensor and leaves `{receiver}` as it "
                f"was; assign the result (`{receiver} = {receiver}.{transfer.method}(...)`)"
            )
            yield Finding(transfer.node, message, self.meta.severity, fix)
