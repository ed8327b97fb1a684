"""What the analysis tells rules: where values meet, and the facts of one file.

Rules read these events; they never walk the tree for devices themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from devlint.core.lattice import UNKNOWN, Device
from devlint.core.values import Value


@dataclass(frozen=True, eq=False)
class Operand:
    """One expression taking part in an operation, with its abstract value."""

    node: cst.BaseExpression
    value: Value


@dataclass(frozen=True, eq=False)
class OperandsMeet:
    """Tensors combined by an operator, a torch function or a tensor method.

    ``strict`` is False for elementwise ops, where PyTorch lets a cpu 0-dim
    tensor join a CUDA operation.
    """

    node: cst.CSTNode
    operation: str
    operands: tuple[Operand, ...]
    strict: bool


@dataclass(frozen=True, eq=False)
class ModuleCall:
    """A module (layer, model, loss) called with inputs."""

    node: cst.Call
    module: Operand
    inputs: tuple[Operand, ...]


@dataclass(frozen=True, eq=False)
class DiscardedTransfer:
    """``x.to(...)``/``x.cuda()``/``x.cpu()`` on a tensor as a bare statement."""

    node: cst.Call
    receiver: Operand
    method: str


@dataclass(eq=False)
class Facts:
    """Everything rules may ask about one analysed file."""

    module: cst.Module
    events: list[object] = field(default_factory=list)  # all of the below, in analysis order
    operand_meetings: list[OperandsMeet] = field(default_factory=list)
    module_calls: list[ModuleCall] = field(default_factory=list)
    discarded_transfers: list[DiscardedTransfer] = field(default_factory=list)
    values: dict[cst.CSTNode, Value] = field(default_factory=dict)
    _positions: object = None

    def value_of(self, node: cst.CSTNode) -> Value | None:
        """The abstract value the analysis gave an expression (None if never reached)."""
        return self.values.get(node)

    def device_of(self, node: cst.CSTNode) -> Device:
        """Where the analysis says an expression's value lives (UNKNOWN if never reached)."""
        value = self.values.get(node)
        return value.device if value is not None else UNKNOWN

    def span_of(self, node: cst.CSTNode) -> tuple[tuple[int, int], tuple[int, int]]:
        """(line, column) of the start and end of ``node``; 1-based lines, 0-based columns."""
        if self._positions is None:
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._positions = wrapper.resolve(PositionProvider)
        where = self._positions[node]
        return (where.start.line, where.start.column), (where.end.line, where.end.column)

    def line_of(self, node: cst.CSTNode) -> int:
        return self.span_of(node)[0][0]

    def code_of(self, node: cst.CSTNode, limit: int = 40) -> str:
        """Source text of ``node`` on one line, shortened for messages."""
        text = " ".join(self.module.code_for_node(node).split())
        return text if len(text) <= limit else text[: limit - 1] + "…"
