"""DVL203: ``torch.load`` without ``map_location`` where the device is chosen at run time."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import libcst as cst

from devlint.core.events import CheckpointLoad, Facts
from devlint.core.lattice import is_known
from devlint.core.syntax import dotted_name
from devlint.core.values import Kind, Value
from devlint.diagnostic import Severity
from devlint.fix import ancestors, is_bound_at, with_keyword
from devlint.rule import Finding, Fix, Rule, RuleMeta, RuntimeExpectation


class LoadWithoutMapLocation(Rule):
    """## What it does
    Finds `torch.load(...)` without `map_location` in a file that chooses its
    device at run time (`torch.cuda.is_available()`, a "cuda if available"
    device, a `device` argument or `args.device`).

    ## Why is this bad?
    `torch.load` restores every storage to the device it was saved from. A
    checkpoint written on a GPU then fails on a machine without one
    (`RuntimeError: Attempting to deserialize object on a CUDA device but
    torch.cuda.is_available() is False`), and on a multi-GPU machine every
    process loads it onto the GPU that saved it.

    `load_state_dict` copies into the model's existing parameters wherever they
    are, so once the checkpoint is loaded with a `map_location` the model's own
    placement wins; there is nothing more to report there.

    ## Fix safety
    The fix passes `map_location=` the device variable the code uses where it
    loads (`device`, `args.device`), or `"cpu"` when there is none in scope. It
    is safe when the checkpoint goes straight into `load_state_dict`
    (`model.load_state_dict(torch.load(path)["model"])`), which copies into the
    parameters wherever they are; otherwise it is unsafe, since the loaded
    tensors then live on another device than before.

    ## References
    - [torch.load](https://pytorch.org/docs/stable/generated/torch.load.html)
    - [Saving and loading models across devices](https://pytorch.org/tutorials/beginner/saving_loading_models.html#saving-loading-model-across-devices)
    """

    meta = RuleMeta(
        code="DVL203",
        name="load-without-map-location",
        summary="torch.load without map_location in code that picks its device at run time",
        severity=Severity.WARNING,
        fixable=True,
        runtime=RuntimeExpectation(
            exception="RuntimeError", message="Attempting to deserialize object on a CUDA device"
        ),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        if not facts.runtime_device:
            return
        for load in facts.checkpoint_loads:
            if not load.map_location:
                message = (
                    "`torch.load` without `map_location` restores tensors to the device they "
                    "were saved from; this file picks its device at run time, so pass "
                    '`map_location=device` (or `"cpu"`)'
                )
                yield Finding(load.node, message, self.meta.severity, partial(_fix, facts, load))


_NOT_CONFIG = frozenset({Kind.TENSOR, Kind.MODULE, Kind.WRAPPER, Kind.BATCH})


def _fix(facts: Facts, load: CheckpointLoad) -> Fix | None:
    device = _device_variable(facts, load.node)
    location = device or '"cpu"'
    call = with_keyword(load.node, "map_location", location)
    if call is None:
        return None
    title = f"Pass `map_location={location}`"
    return Fix(
        load.node, facts.module.code_for_node(call), title, _feeds_load_state_dict(facts, load)
    )


def _device_variable(facts: Facts, at: cst.Call) -> str | None:
    """A device variable the analysis saw that holds a value where ``at`` runs: a name bound
    there, or an attribute (``args.device``) read earlier in the same scope."""
    scope = _scope(facts, at)
    start = facts.span_of(at)[0]
    found: list[tuple[bool, tuple[int, int], str]] = []
    names_seen: set[str] = set()  # a name is bound at `at` or not: ask once per name
    for node, value in facts.values.items():
        if not _holds_device(value) or not isinstance(node, cst.Name | cst.Attribute):
            continue
        text = dotted_name(node)
        if text is None or text in names_seen:
            continue
        if isinstance(node, cst.Name):
            names_seen.add(text)
        if not is_bound_at(facts, text.split(".", 1)[0], at):
            continue
        where = facts.span_of(node)[0]
        if isinstance(node, cst.Attribute):
            receiver = facts.value_of(node.value)
            if receiver is not None and receiver.kind in _NOT_CONFIG:
                continue  # `x.device` of a tensor or a model
            if where >= start or _scope(facts, node) is not scope:
                continue
        found.append((isinstance(node, cst.Attribute), where, text))
    return min(found)[2] if found else None


def _holds_device(value: Value) -> bool:
    """A device object, or a string naming a device (``"cuda" if … else "cpu"``)."""
    return value.kind is Kind.DEVICE or (value.kind is Kind.STRING and is_known(value.device))


def _scope(facts: Facts, node: cst.CSTNode) -> cst.CSTNode | None:
    return next((n for n in ancestors(facts, node) if isinstance(n, cst.FunctionDef)), None)


def _feeds_load_state_dict(facts: Facts, load: CheckpointLoad) -> bool:
    """``model.load_state_dict(torch.load(path))`` (or of an item of the checkpoint)."""
    node: cst.CSTNode = load.node
    for parent in ancestors(facts, node):
        if isinstance(parent, cst.Subscript) and parent.value is node:
            node = parent
            continue
        if isinstance(parent, cst.Arg) and parent.value is node and parent.keyword is None:
            node = parent
            continue
        return (
            isinstance(parent, cst.Call)
            and isinstance(parent.func, cst.Attribute)
            and parent.func.attr.value == "load_state_dict"
            and bool(parent.args)
            and parent.args[0] is node
        )
    return False
