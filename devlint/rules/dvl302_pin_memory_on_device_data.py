"""DVL302: ``pin_memory=True`` on a DataLoader whose batches are already on the GPU."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.rulekit.describe import failure_condition, origin_phrase
from devlint.core.events import Facts, LoaderCreated
from devlint.core.lattice import Concrete, can_be_accelerator
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation


class PinMemoryOnDeviceData(Rule):
    """## What it does
    Finds `DataLoader(..., pin_memory=True)` whose dataset (or `collate_fn`)
    produces tensors that are already on the GPU.

    ## Why is this bad?
    Pinning page-locks host memory so that a later host-to-device copy can be
    asynchronous. A CUDA tensor cannot be pinned: iterating the loader raises
    `RuntimeError: cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors
    can be pinned`.

    ## Fix safety
    No automatic fix: drop `pin_memory=True`, or keep the dataset on the CPU
    (the usual design) and move each batch in the training loop.

    ## References
    - [Memory pinning](https://pytorch.org/docs/stable/data.html#memory-pinning)
    """

    meta = RuleMeta(
        code="DVL302",
        name="pin-memory-on-device-data",
        summary="pin_memory=True on a DataLoader whose batches are already on the GPU",
        severity=Severity.ERROR,
        runtime=RuntimeExpectation(exception="RuntimeError", message="cannot pin"),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        for loader in facts.of(LoaderCreated):
            device = loader.batches.device
            if not loader.pin_memory or not can_be_accelerator(device):
                continue
            certain = isinstance(device, Concrete)
            when = failure_condition(device)
            message = (
                f"the dataset yields tensors on {device.describe()}"
                + origin_phrase(facts, loader.batches.origin)
                + ", which cannot be pinned; drop `pin_memory=True` or keep the data on the "
                f"cpu{when}"
            )
            yield Finding(loader.node, message, Severity.ERROR if certain else Severity.WARNING)
