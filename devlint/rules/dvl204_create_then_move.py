"""DVL204: a tensor created on the CPU and moved to a device at once."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core.events import Facts
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation


class CreateThenMove(Rule):
    """## What it does
    Finds `torch.zeros(...).to(device)`, `torch.randn(...).cuda()`,
    `torch.tensor(data).to(device)` and other factories called without
    `device=` whose result is moved to a device straight away.

    ## Why is this bad?
    The tensor is allocated and filled in host memory, then copied to the
    device: a needless allocation and a synchronous host-to-device copy, often
    inside the training loop. Creating it on the device (`device=`) does
    neither.

    A performance hint, so it is off by default: turn it on with
    `--extend-select DVL204` (or `extend-select` in `[tool.devlint]`).

    ## Fix safety
    Safe for deterministic factories (`zeros`, `ones`, `full`, `arange`,
    `eye`, `tensor` …). For random factories (`randn`, `rand`, `randint` …)
    the fix draws from the device's generator instead of the CPU's, so the
    numbers change under a fixed seed: that fix is unsafe.

    ## References
    - [Creation ops](https://pytorch.org/docs/stable/torch.html#creation-ops)
    - [Performance tuning guide: create tensors directly on the target device](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#create-tensors-directly-on-the-target-device)
    """

    meta = RuleMeta(
        code="DVL204",
        name="create-then-move",
        summary="a tensor is created on the CPU and moved to a device at once",
        severity=Severity.INFO,
        fixable=True,
        default_enabled=False,
        runtime=RuntimeExpectation(symptom="an extra host-to-device copy for every creation"),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        for creation in facts.creations_then_moves:
            factory = facts.code_of(creation.factory.func)
            device = creation.target.value.device.describe()
            message = (
                f"`{factory}(...)` is created on the cpu and copied to {device}; "
                f"create it there with `device=`"
            )
            if creation.random:
                message += " (the random numbers then come from the device's generator)"
            yield Finding(creation.node, message, self.meta.severity)
