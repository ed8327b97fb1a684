"""DVL102: a module called with an input on another device."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core.events import Clash
from devlint.rulekit.describe import clash_phrase
from devlint.core.events import Facts, ModuleCall, OperandsMeet
from devlint.diagnostic import Severity
from devlint.rule import ClashRule, RuleMeta, RuntimeExpectation


def claims(facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> bool:
    """Any clash at a module call that a more specific rule did not claim."""
    return isinstance(event, ModuleCall)


class ModuleInputDevice(ClashRule):
    """## What it does
    Finds a model, layer or loss called with a tensor that lives on another
    device than the module's parameters and buffers: a CUDA model fed a CPU
    tensor, a CPU model fed a CUDA tensor, or a parameterless module such as a
    loss criterion called with predictions on the GPU and targets on the CPU.

    ## Why is this bad?
    `Module.to(device)` moves parameters and buffers, never the inputs. The
    first layer then fails with `RuntimeError: Expected all tensors to be on
    the same device` (or "Input type (torch.FloatTensor) and weight type
    (torch.cuda.FloatTensor) should be the same").

    `nn.DataParallel` scatters CPU inputs to its GPUs itself, so a CPU batch
    passed to a DataParallel model is not reported.

    ## Fix safety
    No automatic fix: move the input with `.to(device)` (or create it with
    `device=`) where it is made.

    ## References
    - [nn.Module.to](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.to)
    - [CUDA semantics](https://pytorch.org/docs/stable/notes/cuda.html)
    """

    meta = RuleMeta(
        code="DVL102",
        name="module-input-device",
        summary="a module is called with an input on another device",
        severity=Severity.ERROR,
        runtime=RuntimeExpectation(
            exception="RuntimeError", message="Expected all tensors to be on the same device"
        ),
    )

    owns = (claims,)
    every_clash = True
