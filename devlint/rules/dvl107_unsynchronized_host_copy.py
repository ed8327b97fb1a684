"""DVL107: a non-blocking device-to-host copy read before synchronising."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.rulekit.describe import origin_phrase
from devlint.core.events import Facts, UnsyncedRead
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation


class UnsynchronizedHostCopy(Rule):
    """## What it does
    Finds `t.to("cpu", non_blocking=True)` of a tensor that may be on the GPU
    whose result is read (`.numpy()`, `.item()`, printed, indexed, used in
    arithmetic, passed to NumPy or torch) before any synchronisation point
    (`torch.cuda.synchronize()`, `stream.synchronize()`, `event.synchronize()`,
    or a blocking copy such as `.item()` or `.cpu()` of a GPU tensor).

    ## Why is this bad?
    A non-blocking device-to-host copy returns at once; the data arrives when
    the stream gets there. Reading the host tensor before then reads whatever
    the memory held: silently wrong metrics, checkpoints or predictions, and
    only sometimes.

    ## Fix safety
    No automatic fix: synchronise first (`torch.cuda.synchronize()` or an
    event), or drop `non_blocking=True`.

    ## References
    - [CUDA semantics: asynchronous execution](https://pytorch.org/docs/stable/notes/cuda.html#asynchronous-execution)
    - [A guide on good usage of non_blocking and pin_memory](https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html)
    """

    meta = RuleMeta(
        code="DVL107",
        name="unsynchronized-host-copy",
        summary="a non-blocking device-to-host copy is read before synchronising",
        severity=Severity.WARNING,
        runtime=RuntimeExpectation(symptom="the host copy differs from the device tensor"),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        reported: set[int] = set()
        for read in facts.of(UnsyncedRead):
            origin = read.copy.value.origin
            if origin is None or id(origin.node) in reported:
                continue
            reported.add(id(origin.node))
            message = (
                f"`{facts.code_of(read.node)}` reads a host copy made with `non_blocking=True`"
                + origin_phrase(facts, origin)
                + " before any synchronisation; the data may not have arrived: call "
                "`torch.cuda.synchronize()` (or an event's) first"
            )
            yield Finding(read.node, message, self.meta.severity)
