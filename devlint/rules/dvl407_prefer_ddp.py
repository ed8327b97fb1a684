"""DVL407: nn.DataParallel where DistributedDataParallel is recommended."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core.events import Facts, WrapperCreated
from devlint.rulekit.wrapping import wrapper_info
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation


class PreferDdp(Rule):
    """## What it does
    Finds every `nn.DataParallel(...)`. Off by default: turn it on with
    `--extend-select DVL407`.

    ## Why is this bad?
    PyTorch's documentation recommends `DistributedDataParallel` instead of
    `DataParallel` even on a single node: DataParallel is single-process and
    multi-threaded (limited by the GIL), replicates the model on every
    forward pass, gathers outputs on one GPU and loses attribute updates made
    in `forward`. Most of the DVL4xx bugs do not exist with DDP.

    ## Fix safety
    No automatic fix: switching to DDP means launching one process per GPU
    (`torchrun`).

    ## References
    - [nn.DataParallel: "It is recommended to use DistributedDataParallel"](https://pytorch.org/docs/stable/generated/torch.nn.DataParallel.html)
    - [DDP vs DataParallel](https://pytorch.org/tutorials/beginner/ddp_series_theory.html)
    """

    meta = RuleMeta(
        code="DVL407",
        name="prefer-ddp",
        summary="nn.DataParallel is used where DistributedDataParallel is recommended",
        severity=Severity.INFO,
        default_enabled=False,
        runtime=RuntimeExpectation(symptom="none: a recommendation, bad.py runs"),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        for created in facts.of(WrapperCreated):
            info = wrapper_info(created.wrapper)
            if info is not None and not info.distributed:
                message = (
                    "PyTorch recommends DistributedDataParallel over DataParallel, even on one "
                    "node: one process per GPU, no per-step replication, no lost attributes"
                )
                yield Finding(created.node, message, self.meta.severity)
