"""DVL105: an indexing op or embedding gets indices on another device."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core.conflicts import called_module, first_per_source
from devlint.rulekit.describe import clash_phrase
from devlint.core.events import ADVANCED_INDEXING, Clash, Facts, ModuleCall, OperandsMeet
from devlint.diagnostic import Severity
from devlint.rule import ClashRule, Finding, RuleMeta, RuntimeExpectation

ADVICE = (
    "indices must live on the device of the tensor they index (advanced indexing `t[idx]` is "
    "the one exception)"
)
CPU_TENSOR_ADVICE = (
    "a cpu tensor takes indices on the cpu only (a GPU tensor accepts cpu indices, not the "
    "reverse); move the indices with `.cpu()` or the tensor to their device"
)


INDEX_OPERATIONS = frozenset(
    {
        "index_select", "gather", "scatter", "scatter_", "scatter_add", "scatter_add_",
        "scatter_reduce", "scatter_reduce_", "take_along_dim", "embedding", "embedding_bag",
        "index_add", "index_add_", "index_copy", "index_copy_", ADVANCED_INDEXING,
    }
)  # fmt: skip
INDEX_MODULES = frozenset({"torch.nn.Embedding", "torch.nn.EmbeddingBag"})


def claims(facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> bool:
    """An indexing operation or an embedding whose indices sit on another device."""
    if isinstance(event, OperandsMeet) and event.operation in INDEX_OPERATIONS:
        return True
    return called_module(event, clash) in INDEX_MODULES


class IndexOnOtherDevice(ClashRule):
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

    owns = (claims,)

    def finding(self, facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> Finding:
        indexing = isinstance(event, OperandsMeet) and event.operation == ADVANCED_INDEXING
        advice = CPU_TENSOR_ADVICE if indexing else ADVICE
        return Finding(event.node, clash_phrase(facts, clash) + f"; {advice}", clash.severity)
