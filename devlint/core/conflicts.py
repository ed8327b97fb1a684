"""When operands cannot share an operation: PyTorch's device rules over abstract values."""

from __future__ import annotations

from dataclasses import dataclass

from devlint.core.events import ModuleCall, Operand
from devlint.core.lattice import CPU, conflict
from devlint.core.values import Kind
from devlint.diagnostic import Severity


@dataclass(frozen=True, eq=False)
class Clash:
    """Two operands whose devices conflict; ``first`` is the cpu side when there is one."""

    first: Operand
    second: Operand
    severity: Severity

    @property
    def loader_side(self) -> Operand | None:
        """The operand that is an unmoved DataLoader batch, if the clash is about one."""
        for operand in (self.first, self.second):
            origin = operand.value.origin
            if operand.value.device == CPU and origin is not None and origin.from_loader:
                return operand
        return None


def _clash(a: Operand, b: Operand, strict: bool) -> Clash | None:
    severity = conflict(a.value.device, b.value.device)
    if severity is None:
        return None
    if b.value.device == CPU:
        a, b = b, a
    if not strict and a.value.device == CPU and a.value.ndim != 1:
        return None  # a cpu 0-dim tensor may join a CUDA elementwise op (or it may be one)
    return Clash(a, b, severity)


def operands_clash(operands: tuple[Operand, ...], strict: bool) -> Clash | None:
    """The most certain clash among tensors that meet in one operation, if any."""
    best: Clash | None = None
    for i, first in enumerate(operands):
        for second in operands[i + 1 :]:
            found = _clash(first, second, strict)
            if found is not None and (best is None or found.severity is Severity.ERROR):
                best = found
                if found.severity is Severity.ERROR:
                    return best
    return best


def module_call_clash(call: ModuleCall) -> Clash | None:
    """A module whose parameters sit elsewhere than its input, or a stateless module
    (a loss, an activation) whose inputs disagree with each other."""
    module = call.module.value
    if module.kind is not Kind.MODULE:
        return None
    if module.stateful:
        for operand in call.inputs:
            found = _clash(operand, call.module, strict=True)
            if found is not None:
                return found
        return None
    if module.stateful is False:
        return operands_clash(call.inputs, strict=True)
    return None
