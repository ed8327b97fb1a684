"""DVL402: a checkpoint saved from a DataParallel/DDP wrapper (``module.``-prefixed keys)."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devlint.rulekit.checkpoint_paths import file_names, path_argument
from devlint.core.events import CheckpointSave, Facts, StateDictLoad
from devlint.core.syntax import descendants, last_name, string_value
from devlint.core.values import Kind
from devlint.rulekit.wrapping import wrapped_state_in
from devlint.rulekit.message import place
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation


_PREFIX = "module."


class CheckpointFromWrapper(Rule):
    """## What it does
    Finds `torch.save(model.state_dict(), path)` (also inside a dict) where
    `model` is, or may be, an `nn.DataParallel`/`DistributedDataParallel`
    wrapper, and `net.load_state_dict(...)` into an unwrapped model in a file
    that saves such checkpoints.

    It stays silent when the code shows that its readers expect the prefix: the
    file, or a project module it imports (the model's own `load_weight`), strips
    or adds `module.` (or calls `consume_prefix_in_state_dict_if_present`), or
    the file restores its checkpoints into the wrapper (`wrapper.load_state_dict(...)`,
    or the wrapper handed to a restore function with the saved file's path) and
    into no unwrapped model.

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
        wrapped_saves = [
            (save, origin)
            for save in facts.of(CheckpointSave)
            if (origin := wrapped_state_in(save.payload)) is not None
        ]
        if not wrapped_saves or _prefix_expected(facts, [save for save, _ in wrapped_saves]):
            return
        first_save = wrapped_saves[0][0]
        for save, origin in wrapped_saves:
            wrapper = facts.code_of(origin.subject)
            message = (
                f"this saves the `state_dict()` of the wrapper `{wrapper}` ("
                + place(facts, origin.node)
                + "): its keys start with `module.` and will not load into an unwrapped model; "
                f"save `{wrapper}.module.state_dict()`"
            )
            yield Finding(save.node, message, self.meta.severity)
        for load in _unwrapped_loads(facts):
            message = (
                f"`{facts.code_of(load.target.node)}` is not wrapped, but this file saves "
                "wrapped state dicts ("
                + place(facts, first_save.node)
                + ") whose keys start with `module.`: loading one here fails"
            )
            yield Finding(load.node, message, Severity.ERROR)


def _unwrapped_loads(facts: Facts) -> list[StateDictLoad]:
    return [load for load in facts.of(StateDictLoad) if load.target.value.kind is Kind.MODULE]


def _prefix_expected(facts: Facts, saves: list[CheckpointSave]) -> bool:
    """The file, or a project module it uses, handles the `module.` prefix (strips or adds
    it), or the file restores its checkpoints into a wrapper and into nothing unwrapped: the
    prefixed keys are what its readers want."""
    modules = (facts.module, *(scope.module for scope in facts.imported))
    if any(_handles_prefix(module) for module in modules):
        return True
    saved_names = set().union(*(file_names(path_argument(save.node, 1)) for save in saves))
    restores_into_wrapper = any(
        _restores_into_wrapper(facts, node, saved_names)
        for node in descendants(facts.module)
        if isinstance(node, cst.Call)
    )
    return restores_into_wrapper and not _unwrapped_loads(facts)


def _handles_prefix(module: cst.Module) -> bool:
    """A key starting with `module.` (``k.replace("module.", "")``,
    ``key.startswith("module.transformer.")``) or torch's helper that strips it."""
    for node in descendants(module):
        if isinstance(node, cst.SimpleString) and (string_value(node) or "").startswith(_PREFIX):
            return True
        if (
            isinstance(node, cst.Call)
            and last_name(node.func) == "consume_prefix_in_state_dict_if_present"
        ):
            return True
    return False


def _restores_into_wrapper(facts: Facts, call: cst.Call, saved_names: set[str]) -> bool:
    """``wrapper.load_state_dict(...)``, or a wrapper handed to a call together with the path
    of a checkpoint this file saves (``restart_from_checkpoint(path, state_dict=wrapper)``)."""
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "load_state_dict":
        return _is_wrapper(facts, call.func.value)
    if not any(_is_wrapper(facts, arg.value) for arg in call.args):
        return False
    return any(saved_names & file_names(arg.value) for arg in call.args)


def _is_wrapper(facts: Facts, node: cst.BaseExpression) -> bool:
    value = facts.value_of(node)
    return value is not None and value.kind is Kind.WRAPPER
