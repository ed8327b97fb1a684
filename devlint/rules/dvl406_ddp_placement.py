"""DVL406: DistributedDataParallel on the wrong device for its process."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devlint.core.events import Facts, WrapperCall, WrapperCreated
from devlint.core.lattice import CPU, Concrete
from devlint.rulekit.wrapping import mentions_rank, wrapper_info
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation


class DdpPlacement(Rule):
    """## What it does
    Checks `DistributedDataParallel(model, device_ids=...)` against where the
    model is: a model still on the CPU while `device_ids` is given; literal
    `device_ids=[0]` while the model was moved with the local rank;
    `device_ids=[local_rank]` while the model was moved to bare `"cuda"`;
    bare `"cuda"` without `torch.cuda.set_device(local_rank)`; and inputs of
    the DDP model moved to `"cuda"`/`"cuda:0"` while the model is on its
    rank's GPU.

    ## Why is this bad?
    Each DDP process must own one GPU: the module on `cuda:local_rank` and
    `device_ids=[local_rank]`. A CPU module with `device_ids` raises
    `ValueError: DistributedDataParallel device_ids and output_device
    arguments only work with single-device/multiple-device GPU modules or CPU
    modules`; otherwise every process piles onto GPU 0 (out of memory, or
    inputs and parameters on different devices in every process but one).

    ## Fix safety
    No automatic fix: `torch.cuda.set_device(local_rank)`,
    `model.to(local_rank)`, `DDP(model, device_ids=[local_rank])` and
    `batch.to(local_rank)`.

    ## References
    - [DistributedDataParallel](https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html)
    - [Getting started with DDP](https://pytorch.org/tutorials/intermediate/ddp_tutorial.html)
    """

    meta = RuleMeta(
        code="DVL406",
        name="ddp-placement",
        summary="DistributedDataParallel's module, device_ids or inputs are on the wrong GPU",
        severity=Severity.WARNING,
        runtime=RuntimeExpectation(
            exception="ValueError", message="device_ids and output_device arguments only work"
        ),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        rank_models: set[int] = set()
        for created in facts.of(WrapperCreated):
            info = wrapper_info(created.wrapper)
            if info is None or not info.distributed:
                continue
            problem = _placement_problem(facts, created)
            if _moved_by_rank(created):
                rank_models.add(id(info.node))
            if problem is not None:
                message, severity = problem
                yield Finding(created.node, message, severity)
        for call in facts.of(WrapperCall):
            info = wrapper_info(call.wrapper.value)
            if info is None or id(info.node) not in rank_models:
                continue
            for operand in call.inputs:
                if _on_gpu_zero(operand.value, facts):
                    message = (
                        f"`{facts.code_of(operand.node)}` is moved to GPU 0 in every process, but "
                        f"the DDP model is on its rank's GPU: move it with the local rank"
                    )
                    yield Finding(call.node, message, self.meta.severity)
                    break


def _placement_problem(facts: Facts, created: WrapperCreated) -> tuple[str, Severity] | None:
    info = created.wrapper.ref
    inner = info.inner
    ids = info.device_ids
    if inner.device == CPU and ids is not None:
        return (
            "the model is still on the cpu but `device_ids` is given: DDP needs the module on "
            "this process's GPU (`model.to(local_rank)`)",
            Severity.ERROR,
        )
    by_rank = _moved_by_rank(created)
    if ids and all(isinstance(node, cst.Integer) for node, _ in ids) and by_rank:
        return (
            "`device_ids` names fixed GPUs but the model was moved with the local rank: use "
            "`device_ids=[local_rank]`",
            Severity.WARNING,
        )
    bare = _on_gpu_zero(inner, facts)
    if ids and any(mentions_rank(node) for node, _ in ids) and bare:
        return (
            "`device_ids` uses the local rank but the model was moved to GPU 0 in every process: "
            "move it with `model.to(local_rank)`",
            Severity.WARNING,
        )
    if bare:
        return (
            "the model goes to bare `cuda` and `torch.cuda.set_device(local_rank)` is never "
            "called: every process uses GPU 0",
            Severity.WARNING,
        )
    return None


def _moved_by_rank(created: WrapperCreated) -> bool:
    return mentions_rank(_origin_subject(created.wrapper.ref.inner))


def _origin_subject(value) -> cst.CSTNode | None:
    return value.origin.subject if value.origin is not None else None


def _on_gpu_zero(value, facts: Facts) -> bool:
    """On GPU 0 in every process: ``"cuda:0"``, or bare ``"cuda"``/``.cuda()`` when
    ``torch.cuda.set_device`` is never called (a rank's GPU is a symbol, not concrete)."""
    device = value.device
    if not isinstance(device, Concrete) or device.type != "cuda":
        return False
    return device.index == 0 or (device.index is None and not facts.sets_cuda_device)
