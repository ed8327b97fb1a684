"""DVL103: a tensor created without device= inside a function meets a tensor on a device."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core.conflicts import Cause, clashes_with_cause, first_per_source
from devlint.core.describe import clash_phrase
from devlint.core.events import Facts
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation

ADVICE = (
    "create it where its partner lives (`device=x.device`, `x.new_zeros(...)`, "
    "`torch.zeros_like(x)`)"
)


class TensorCreatedWithoutDevice(Rule):
    """## What it does
    Finds `torch.zeros/ones/empty/full/arange/randn/rand/randint/eye/linspace/tensor(...)`
    called without `device=` inside a function or method (a module's `forward`,
    an `init_hidden`, a helper called from them, a function whose tensor
    arguments live on a device) whose result meets a tensor on another device.

    ## Why is this bad?
    Factories create on the CPU unless told otherwise. Inside `forward` the
    inputs live wherever the model was moved, so a hidden state, an attention
    mask, positional indices, reparameterisation noise, a one-hot target or an
    identity matrix built without `device=` fails with `RuntimeError: Expected
    all tensors to be on the same device` as soon as the model runs on a GPU.
    Inside an `nn.Module`, the inputs of `forward` are taken to live on the
    module's device, so the bug is found even when no caller is visible.

    Not reported: CPU 0-dim constants in elementwise ops (PyTorch accepts
    them), `device=x.device`, `x.new_*`, `*_like`, results only used on the CPU.

    ## Fix safety
    No automatic fix yet; the fix is `device=<input>.device` on the factory.

    ## References
    - [Creation ops](https://pytorch.org/docs/stable/torch.html#creation-ops)
    - [Tensor.new_zeros](https://pytorch.org/docs/stable/generated/torch.Tensor.new_zeros.html)
    """

    meta = RuleMeta(
        code="DVL103",
        name="tensor-created-without-device",
        summary="a tensor created without device= inside a function meets a tensor on a device",
        severity=Severity.ERROR,
        runtime=RuntimeExpectation(
            exception="RuntimeError", message="Expected all tensors to be on the same device"
        ),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        found = clashes_with_cause(facts, Cause.NO_DEVICE_FACTORY)
        for event, clash in first_per_source(found):
            message = f"{clash_phrase(facts, clash)}; {ADVICE}"
            yield Finding(event.node, message, clash.severity)
