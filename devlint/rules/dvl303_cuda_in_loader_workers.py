"""DVL303: DataLoader worker processes that would touch CUDA after a fork."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.rulekit.describe import failure_condition, origin_phrase
from devlint.core.events import Facts, LoaderCreated
from devlint.core.lattice import Concrete, can_be_accelerator
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation


class CudaInLoaderWorkers(Rule):
    """## What it does
    Finds a `DataLoader` with `num_workers > 0` whose dataset holds or produces
    CUDA tensors (in `__init__` or `__getitem__`) or whose `collate_fn` does,
    when no spawn or forkserver start method is visible.

    ## Why is this bad?
    On Linux, DataLoader workers are forked. CUDA cannot be used in a forked
    child once the parent has initialised it: the workers die with
    `RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA
    with multiprocessing, you must use the 'spawn' start method`. Even with
    spawn, producing GPU tensors in workers defeats their purpose.

    ## Fix safety
    No automatic fix: keep the dataset on the CPU and move batches in the
    training loop (with `pin_memory=True` and `non_blocking=True`), or set
    `multiprocessing_context="spawn"`.

    ## References
    - [Multi-process data loading](https://pytorch.org/docs/stable/data.html#multi-process-data-loading)
    - [CUDA in multiprocessing](https://pytorch.org/docs/stable/notes/multiprocessing.html#cuda-in-multiprocessing)
    """

    meta = RuleMeta(
        code="DVL303",
        name="cuda-in-loader-workers",
        summary="DataLoader workers would create or touch CUDA tensors after a fork",
        severity=Severity.ERROR,
        runtime=RuntimeExpectation(
            exception="RuntimeError", message="Cannot re-initialize CUDA in forked subprocess"
        ),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        if facts.spawn_start_method:
            return
        for loader in facts.of(LoaderCreated):
            device = loader.batches.device
            if loader.spawn or not loader.workers or not can_be_accelerator(device):
                continue
            certain = isinstance(device, Concrete)
            when = failure_condition(device)
            message = (
                f"{loader.workers} forked worker(s) would produce tensors on {device.describe()}"
                + origin_phrase(facts, loader.batches.origin)
                + f"; keep the dataset on the cpu and move batches in the loop{when}"
            )
            yield Finding(loader.node, message, Severity.ERROR if certain else Severity.WARNING)
