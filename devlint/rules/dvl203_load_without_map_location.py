"""DVL203: ``torch.load`` without ``map_location`` where the device is chosen at run time."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core.events import Facts
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation


class LoadWithoutMapLocation(Rule):
    """## What it does
    Finds `torch.load(...)` without `map_location` in a file that chooses its
    device at run time (`torch.cuda.is_available()`, a "cuda if available"
    device, a `device` argument or `args.device`).

    ## Why is this bad?
    `torch.load` restores every storage to the device it was saved from. A
    checkpoint written on a GPU then fails on a machine without one
    (`RuntimeError: Attempting to deserialize object on a CUDA device but
    torch.cuda.is_available() is False`), and on a multi-GPU machine every
    process loads it onto the GPU that saved it.

    `load_state_dict` copies into the model's existing parameters wherever they
    are, so once the checkpoint is loaded with a `map_location` the model's own
    placement wins; there is nothing more to report there.

    ## Fix safety
    No automatic fix yet: pass `map_location=device` (or `"cpu"`).

    ## References
    - [torch.load](https://pytorch.org/docs/stable/generated/torch.load.html)
    - [Saving and loading models across devices](https://pytorch.org/tutorials/beginner/saving_loading_models.html#saving-loading-model-across-devices)
    """

    meta = RuleMeta(
        code="DVL203",
        name="load-without-map-location",
        summary="torch.load without map_location in code that picks its device at run time",
        severity=Severity.WARNING,
        runtime=RuntimeExpectation(
            exception="RuntimeError", message="Attempting to deserialize object on a CUDA device"
        ),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        if not facts.runtime_device:
            return
        for load in facts.checkpoint_loads:
            if not load.map_location:
                message = (
                    "`torch.load` without `map_location` restores tensors to the device they "
                    "were saved from; this file picks its device at run time, so pass "
                    '`map_location=device` (or `"cpu"`)'
                )
                yield Finding(load.node, message, self.meta.severity)
