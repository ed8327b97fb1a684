"""DVL105: an indexing op or embedding gets indices on another device."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core.conflicts import Cause, clashes_with_cause, first_per_source
from devlint.core.describe import clash_phrase
from devlint.core.events import ADVANCED_INDEXING, Facts, OperandsMeet
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation

ADVICE = (
    "indices must live on the device of the tensor they index (advanced indexing `t[idx]` is "
    "the one exception)"
)
CPU_TENSOR_ADVICE = (
    "a cpu tensor takes indices on the cpu only (a GPU tensor accepts cpu indices, not the "
    "reverse); move the indices with `.cpu()` or the tensor to their device"
)


class IndexOnOtherDevice(Rule):
    """## What it does
    Finds `index_select`, `gather`, `scatter`/`scatter_add`, `take_along_dim`,
    `index_add`/`index_copy`, `F.embedding` and `nn.Embedding` called with
    indices on another device than the tensor or weight they index —
    typically CPU indices into a CUDA tensor.

    ## Why is this bad?
    Unlike advanced indexing (`cuda_t[cpu_idx]`, which PyTorch accepts),
    these kernels check that every operand is on one device and raise
    `RuntimeError: Expected all tensors to be on the same device`. Token ids
    straight from a tokenizer or a DataLoader are the usual culprit for
    `nn.Embedding`.

    ## Fix safety
    No automatic fix: move the indices (`idx.to(weight.device)`) or create
    them with `device=`.

    ## References
    - [torch.index_select](https://pytorch.org/docs/stable/generated/torch.index_select.html)
    - [nn.Embedding](https://pytorch.org/docs/stable/generated/torch.nn.Embedding.html)
    """

    meta = RuleMeta(
        code="DVL105",
        name="index-on-other-device",
        summary="an indexing op or embedding gets indices on another device",
        severity=Severity.ERROR,
        runtime=RuntimeExpectation(exception="RuntimeError", message="on the same device"),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        found = clashes_with_cause(facts, Cause.INDEX)
        for event, clash in first_per_source(found):
            indexing = isinstance(event, OperandsMeet) and event.operation == ADVANCED_INDEXING
            advice = CPU_TENSOR_ADVICE if indexing else ADVICE
            message = f"{clash_phrase(facts, clash)}; {advice}"
            yield Finding(event.node, message, clash.severity)
