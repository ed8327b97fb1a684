"""DVL104: a plain tensor attribute (or a plain list of modules) that .to() will not move."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core.conflicts import Cause, clashes_with_cause, first_per_source
from devlint.core.describe import clash_phrase
from devlint.core.events import Facts
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation

ADVICE = (
    "`Module.to()` moves only parameters, buffers and registered submodules: use "
    "`self.register_buffer(...)` for tensors and `nn.ModuleList`/`nn.ModuleDict` for modules"
)


class UnregisteredTensorAttribute(Rule):
    """## What it does
    Finds a tensor stored on an `nn.Module` as a plain attribute
    (`self.mask = torch.tril(...)`, `self.anchors = torch.tensor(...)`) or
    submodules kept in a plain Python list or dict (`self.layers =
    [nn.Linear(...)]`), used in a method together with inputs or parameters.

    ## Why is this bad?
    `model.to(device)` moves parameters, buffers and registered submodules
    only. The plain attribute stays on the CPU, and the first forward pass on
    a GPU fails with `RuntimeError: Expected all tensors to be on the same
    device`. A plain list also hides its modules from `parameters()`, so the
    optimizer never trains them, and from `state_dict()`.

    ## Fix safety
    No automatic fix yet: `self.register_buffer("mask", ...)` (with
    `persistent=False` if it should stay out of checkpoints), or
    `nn.ModuleList` / `nn.ModuleDict`.

    ## References
    - [Module.register_buffer](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_buffer)
    - [nn.ModuleList](https://pytorch.org/docs/stable/generated/torch.nn.ModuleList.html)
    """

    meta = RuleMeta(
        code="DVL104",
        name="unregistered-tensor-attribute",
        summary="a plain tensor attribute (or a plain list of modules) that .to() will not move",
        severity=Severity.ERROR,
        runtime=RuntimeExpectation(
            exception="RuntimeError", message="Expected all tensors to be on the same device"
        ),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        found = clashes_with_cause(facts, Cause.PLAIN_ATTRIBUTE)
        for event, clash in first_per_source(found):
            message = f"{clash_phrase(facts, clash)}; {ADVICE}"
            yield Finding(event.node, message, clash.severity)
