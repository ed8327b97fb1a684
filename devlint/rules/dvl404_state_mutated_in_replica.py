"""DVL404: attributes assigned in the forward of a DataParallel-wrapped module."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devlint.core.events import Facts, WrapperCreated
from devlint.core.scopes import ClassInfo, WrapperInfo
from devlint.core.syntax import assignments_to_self
from devlint.diagnostic import Severity
from devlint.rulekit.message import place
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation


class StateMutatedInReplica(Rule):
    """## What it does
    Finds `self.<attr> = ...` and `self.<attr> += ...` inside `forward` of an
    `nn.Module` subclass that the same file wraps in `nn.DataParallel`.

    ## Why is this bad?
    DataParallel runs `forward` on replicas of the module, created for every
    call and thrown away afterwards. Counters, caches and statistics assigned
    on `self` in `forward` are set on the replicas and lost: on one GPU the
    code works, on several the state silently never changes.

    ## Fix safety
    No automatic fix: keep such state in a buffer updated in place on
    `device_ids[0]`, return it from `forward`, or use DistributedDataParallel.

    ## References
    - [nn.DataParallel: warning on attribute updates in forward](https://pytorch.org/docs/stable/generated/torch.nn.DataParallel.html)
    """

    meta = RuleMeta(
        code="DVL404",
        name="state-mutated-in-replica",
        summary="forward of a DataParallel-wrapped module assigns attributes that replicas lose",
        severity=Severity.WARNING,
        runtime=RuntimeExpectation(symptom="forward passes counted: 0 of", gpus=2),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        for cls, wrap in _wrapped_classes(facts).items():
            forward = cls.methods.get("forward")
            if forward is None or forward.home is not None:  # another file's: reported there
                continue
            for node, attribute in assignments_to_self(forward.node):
                message = (
                    f"`self.{attribute}` is assigned in `forward`, but this module is wrapped "
                    "in DataParallel ("
                    + place(facts, wrap)
                    + "): forward runs on replicas and the assignment is lost"
                )
                yield Finding(node, message, self.meta.severity)


def _wrapped_classes(facts: Facts) -> dict[ClassInfo, cst.Call]:
    """The file's classes wrapped in DataParallel, each with the first call wrapping it."""
    wrapped: dict[ClassInfo, cst.Call] = {}
    for created in facts.of(WrapperCreated):
        info = created.wrapper.ref
        if isinstance(info, WrapperInfo) and not info.distributed:
            if isinstance(info.inner.ref, ClassInfo):
                wrapped.setdefault(info.inner.ref, created.node)
    return wrapped
