"""DVL402: a checkpoint saved from a DataParallel/DDP wrapper (``module.``-prefixed keys)."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core.events import Facts
from devlint.core.values import Kind
from devlint.core.wrapping import wrapped_state_in
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation


class CheckpointFromWrapper(Rule):
    """## What it does
    Finds `torch.save(model.state_dict(), path)` (also inside a dict) where
    `model` is, or may be, an `nn.DataParallel`/`DistributedDataParallel`
    wrapper, and `net.load_state_dict(...)` into an unwrapped model in a file
    that saves such checkpoints.

    ## Why is this bad?
    A wrapper's `state_dict()` keys start with `module.`. Loading the
    checkpoint into an unwrapped model — for inference, on one GPU, on a
    laptop — fails with `RuntimeError: Error(s) in loading state_dict ...
    Unexpected key(s) in state_dict: "module.fc.weight"`, and with
    `strict=False` silently loads nothing.

    ## Fix safety
    Save `model.module.state_dict()` (or strip the prefix with
    `torch.nn.modules.utils.consume_prefix_in_state_dict_if_present`).

    ## References
    - [Saving torch.nn.DataParallel models](https://pytorch.org/tutorials/beginner/saving_loading_models.html#saving-torch-nn-dataparallel-models)
    """

    meta = RuleMeta(
        code="DVL402",
        name="checkpoint-from-wrapper",
        summary="a state_dict saved through a DataParallel/DDP wrapper has module.-prefixed keys",
        severity=Severity.WARNING,
        runtime=RuntimeExpectation(
            exception="RuntimeError", message="Error(s) in loading state_dict", gpus=2
        ),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        first_save = None
        for save in facts.checkpoint_saves:
            origin = wrapped_state_in(save.payload)
            if origin is None:
                continue
            first_save = first_save or save
            wrapper = facts.code_of(origin.subject)
            message = (
                f"this saves the `state_dict()` of the wrapper `{wrapper}` (line "
                f"{facts.line_of(origin.node)}): its keys start with `module.` and will not load "
                f"into an unwrapped model; save `{wrapper}.module.state_dict()`"
            )
            yield Finding(save.node, message, self.meta.severity)
        if first_save is None:
            return
        for load in facts.state_dict_loads:
            if load.target.value.kind is Kind.MODULE:
                message = (
                    f"`{facts.code_of(load.target.node)}` is not wrapped, but this file saves "
                    f"wrapped state dicts (line {facts.line_of(first_save.node)}) whose keys "
                    f"start with `module.`: loading one here fails"
                )
                yield Finding(load.node, message, Severity.ERROR)
