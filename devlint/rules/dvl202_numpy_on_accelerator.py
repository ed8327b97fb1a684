"""DVL202: ``.numpy()`` on a tensor that may be on an accelerator."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import libcst as cst

from devlint.rulekit.describe import failure_condition, operand_phrase
from devlint.core.events import Facts, HostConversion
from devlint.core.lattice import Concrete, Symbol, can_be_accelerator
from devlint.diagnostic import Severity
from devlint.rulekit.fixes import receiver_text
from devlint.rule import Finding, Fix, Rule, RuleMeta, RuntimeExpectation


class NumpyOnAccelerator(Rule):
    """## What it does
    Finds `.numpy()` (also after `.detach()`), `np.array(t)` and `np.asarray(t)`
    on a tensor that is, or may be, on an accelerator, without `.cpu()` first.
    A tensor parameter converted as it comes is not reported: that is how a
    caller asks for NumPy, and the caller decides where the tensor lives.

    ## Why is this bad?
    NumPy arrays live in host memory. On a GPU the call raises `TypeError:
    can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy
    the tensor to host memory first.` — typically in the metrics or plotting
    code at the end of an epoch, after the expensive part has run.

    The reverse trap, `torch.from_numpy(a)` combined with a CUDA tensor, is a
    mixed-device operation and reported as DVL101.

    ## Fix safety
    Safe: the fix inserts `.cpu()` (`t.cpu().numpy()`, `t.detach().cpu().numpy()`,
    `np.array(t.cpu())`). On a tensor already on the CPU `.cpu()` returns the
    tensor itself, so the array still shares its memory as before.

    ## References
    - [Tensor.numpy](https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html)
    """

    meta = RuleMeta(
        code="DVL202",
        name="numpy-on-accelerator",
        summary="a tensor that may be on an accelerator is converted to NumPy without .cpu()",
        severity=Severity.ERROR,
        fixable=True,
        runtime=RuntimeExpectation(exception="TypeError", message="device type tensor to numpy"),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        for conversion in facts.of(HostConversion):
            device = conversion.tensor.value.device
            if not can_be_accelerator(device) or (isinstance(device, Symbol) and device.tensor):
                continue  # a tensor parameter: converting it is how the caller asks for NumPy
            certain = isinstance(device, Concrete)
            severity = Severity.ERROR if certain else Severity.WARNING
            when = failure_condition(device)
            message = (
                operand_phrase(facts, conversion.tensor)
                + f"; NumPy needs host memory: call `.cpu()` first{when}"
            )
            fix = partial(_fix, facts, conversion.tensor.node)
            yield Finding(conversion.node, message, severity, fix)


def _fix(facts: Facts, tensor: cst.BaseExpression) -> Fix:
    """``t.numpy()`` → ``t.cpu().numpy()``."""
    return Fix(tensor, f"{receiver_text(facts, tensor)}.cpu()", "Copy to the host with `.cpu()`")
