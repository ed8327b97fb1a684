"""DVL408: a CPU tensor handed to a collective that may run on NCCL."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.rulekit.describe import made_here, operand_phrase, ran_elsewhere
from devlint.rulekit.message import Message
from devlint.core.events import Collective, Facts, Operand, ProcessGroupCreated
from devlint.core.lattice import CPU
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation


class CpuTensorInCollective(Rule):
    """## What it does
    Finds `torch.distributed` collectives (`all_reduce`, `broadcast`,
    `all_gather`, `reduce`, ...) given a tensor created on the CPU, such as
    `dist.all_reduce(torch.tensor(count))`, on the default process group.

    It stays silent when the file asks for a backend that reduces CPU tensors
    (gloo, MPI, `"cpu:gloo,cuda:nccl"`, or `init_process_group()` with no
    backend, which PyTorch 2 pairs with gloo) and when a `group=` is passed,
    since that group's backends are not in view. A launcher that sets up the
    group out of view counts when the file tells it the backend
    (`dispatch.run(client, train, backend="gloo")`, `process_group_backend=`).
    It is an error when the file asks for NCCL alone, a warning otherwise.

    A collective in a helper of another project file counts when this file
    hands it a tensor it created (`ddp_all_reduce(torch.tensor(count))`); it
    is reported at that call.

    ## Why is this bad?
    NCCL only moves GPU tensors. Multi-GPU training almost always runs with
    `init_process_group("nccl")`, and there a CPU tensor fails with
    `RuntimeError: No backend type associated with device type cpu` — typically
    in a metric or a seed synchronised at the end of the first epoch, after
    single-GPU and CPU runs (which skip the collective) have passed.

    ## Fix safety
    No automatic fix: create the tensor on the device the reduction runs on
    (`torch.tensor(count, device=loss.device)`, or the rank's
    `torch.device("cuda", local_rank)`).

    ## References
    - [torch.distributed backends](https://pytorch.org/docs/stable/distributed.html#backends)
    - [Which backend to use?](https://pytorch.org/docs/stable/distributed.html#which-backend-to-use)
    """

    meta = RuleMeta(
        code="DVL408",
        name="cpu-tensor-in-collective",
        summary="a CPU tensor is passed to a collective that may run on NCCL",
        severity=Severity.WARNING,
        runtime=RuntimeExpectation(
            exception="RuntimeError", message="No backend type associated with device type cpu"
        ),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        if not facts.of(Collective) or any(map(_reduces_cpu_tensors, facts.of(ProcessGroupCreated))):
            return
        nccl_only = any(_nccl_only(group) for group in facts.of(ProcessGroupCreated))
        severity = Severity.ERROR if nccl_only else Severity.WARNING
        when = "" if nccl_only else " (this fails when the process group uses NCCL)"
        for collective in facts.of(Collective):
            if collective.group:
                continue
            for operand in collective.tensors:
                if operand.value.device != CPU:
                    continue
                where = Message("")
                if collective.elsewhere is not None:
                    if not made_here(facts, operand.value):
                        continue  # another file's helper on its own tensor: reported there
                    operand = Operand(operand.value.origin.node, operand.value)  # as made here
                    where = " (" + ran_elsewhere(facts, collective.elsewhere) + ")"
                message = (
                    operand_phrase(facts, operand)
                    + f"; `{collective.operation}`"
                    + where
                    + f" over NCCL needs it on this process's GPU{when}"
                )
                yield Finding(collective.node, message, severity)
                break


def _reduces_cpu_tensors(group: ProcessGroupCreated) -> bool:
    """The group may have a CPU backend: none named, gloo, MPI or a per-device mapping."""
    if not group.given:
        return True
    backend = (group.backend or "").lower()
    return any(name in backend for name in ("gloo", "mpi", "cpu:", "ucc"))


def _nccl_only(group: ProcessGroupCreated) -> bool:
    return group.backend is not None and group.backend.lower() == "nccl"
