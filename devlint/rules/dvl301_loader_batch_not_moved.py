"""DVL301: a DataLoader batch used on a device without being moved there."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core.conflicts import Clash, module_call_clash, operands_clash
from devlint.core.describe import operand_phrase, when_it_fails
from devlint.core.events import Facts, ModuleCall, OperandsMeet
from devlint.core.syntax import root_name
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
        reported: set[tuple[int, str]] = set()
        for clash in map(_clash_of, facts.events):
            batch = clash.loader_side if clash is not None else None
            if clash is None or batch is None:
                continue
            once = (id(batch.value.origin.node), root_name(batch.node))
            if once in reported:
                continue  # one finding per unmoved batch element, at its first use
            reported.add(once)
            other = clash.second if batch is clash.first else clash.first
            message = (
                f"{operand_phrase(facts, batch)} and was never moved, but "
                f"{operand_phrase(facts, other)}{when_it_fails(clash)}"
            )
            yield Finding(batch.node, message, clash.severity)


def _clash_of(event: object) -> Clash | None:
    if isinstance(event, OperandsMeet):
        return operands_clash(event.operands, event.strict)
    if isinstance(event, ModuleCall):
        return module_call_clash(event)
    return None
