"""DVL301: a DataLoader batch used on a device without being moved there."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core.conflicts import Cause, clashes_with_cause, first_per_source
from devlint.core.describe import operand_phrase, when_it_fails
from devlint.core.events import Facts
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation


class LoaderBatchNotMoved(Rule):
    """## What it does
    Finds a batch from a `DataLoader` (a tuple, list or dict batch, through
    `enumerate`, `zip`, `tqdm`, `iter`/`next` …) that reaches a model, a loss or
    a tensor operation on another device without `.to(device)`.

    ## Why is this bad?
    A DataLoader collates CPU tensors unless its dataset produces device
    tensors. Forgetting to move one element of the batch (often the labels)
    fails with `RuntimeError: Expected all tensors to be on the same device`
    on a GPU machine — and works on the laptop where the code was written.

    A batch moved by a helper in the same file counts as moved. Framework hooks
    such as Lightning's `training_step(self, batch, batch_idx)`, where the
    framework moves the batch, are not reported.

    ## Fix safety
    No automatic fix yet: move the batch once at the top of the loop
    (`x, y = x.to(device), y.to(device)`).

    ## References
    - [torch.utils.data](https://pytorch.org/docs/stable/data.html)
    - [Memory pinning and non_blocking transfers](https://pytorch.org/docs/stable/data.html#memory-pinning)
    """

    meta = RuleMeta(
        code="DVL301",
        name="loader-batch-not-moved",
        summary="a DataLoader batch is used on a device without being moved there",
        severity=Severity.ERROR,
        runtime=RuntimeExpectation(
            exception="RuntimeError", message="Expected all tensors to be on the same device"
        ),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        found = clashes_with_cause(facts, Cause.LOADER_BATCH)
        for _, clash in first_per_source(found):
            batch, other = clash.first, clash.second
            message = (
                f"{operand_phrase(facts, batch)} and was never moved, but "
                f"{operand_phrase(facts, other)}{when_it_fails(clash)}"
            )
            yield Finding(batch.node, message, clash.severity)
