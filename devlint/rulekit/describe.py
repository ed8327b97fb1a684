"""Message text: where each side of a clash lives and where that came from (``Message``s,
which cite the places they name in other files)."""

from __future__ import annotations

import libcst as cst

from devlint.core.events import Clash, Facts, Operand
from devlint.core.lattice import MAYBE_ACCEL, Device, Symbol, is_hard_coded_accelerator
from devlint.core.values import Origin, Value
from devlint.diagnostic import Severity
from devlint.rulekit.message import Message, place


def origin_phrase(facts: Facts, origin: Origin | None) -> Message:
    """`` (moved to `device` at line 5)`` or nothing when the origin is not known."""
    if origin is None:
        return Message("")
    verb = origin.verb
    if "{}" in verb:
        subject = origin.subject if origin.subject is not None else origin.node
        verb = verb.format(f"`{facts.code_of(subject)}`")
    return f" ({verb} at " + place(facts, origin.node) + ")"


def operand_phrase(facts: Facts, operand: Operand) -> Message:
    """`` `labels` is on cpu (created at line 8)``."""
    device = operand.value.device.describe()
    origin = origin_phrase(facts, operand.value.origin)
    return f"`{facts.code_of(operand.node)}` is on {device}" + origin


def when_it_fails(clash: Clash) -> str:
    """The condition under which a warning-level clash fails at run time."""
    if clash.severity is Severity.ERROR:
        return ""
    device = clash.second.value.device
    if is_hard_coded_accelerator(clash.first.value.device) and isinstance(device, Symbol):
        return f" (this fails when {_chosen(device)} the CPU or another GPU)"
    return failure_condition(device)


def _chosen(device: Symbol) -> str:
    """`` `x` is on`` / `` `device` is``: the run-time choice a condition names."""
    if device.tensor:
        return f"`{device.holder}` is on"
    return f"{device.describe()} is"


def failure_condition(device: Device) -> str:
    """`` (this fails when `device` is a GPU)`` for a device that is a GPU only sometimes."""
    if isinstance(device, Symbol):
        return f" (this fails when {_chosen(device)} a GPU)"
    if device is MAYBE_ACCEL:
        return " (this fails on a machine with a GPU)"
    return ""


def clash_phrase(facts: Facts, clash: Clash) -> Message:
    """Both sides of a clash, cpu side first, where it happens when that is another file's
    code, and when it fails."""
    first = operand_phrase(facts, clash.first)
    second = operand_phrase(facts, clash.second)
    return first + " but " + second + they_meet(facts, clash) + when_it_fails(clash)


def they_meet(facts: Facts, clash: Clash) -> Message:
    """``; they meet at utils.py:12, in code this call runs`` when the clash happens in
    another file's code, else nothing."""
    if clash.elsewhere is None:
        return Message("")
    return "; they meet " + ran_elsewhere(facts, clash.elsewhere)


def ran_elsewhere(facts: Facts, node: cst.CSTNode) -> Message:
    """``at utils.py:12, in code this call runs``: where in another file's code it happens."""
    return "at " + place(facts, node) + ", in code this call runs"


def made_here(facts: Facts, value: Value) -> bool:
    """The value was made by this file's code (and handed to another file's helper)."""
    return value.origin is not None and facts.is_here(value.origin.node)
