"""What the analysis tells rules: where values meet, and the facts of one file.

Rules read these events; they never walk the tree for devices themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

import libcst as cst

from devlint.core.imports import Importer
from devlint.core.lattice import UNKNOWN, Device
from devlint.core.positions import NotInModule, Positions
from devlint.core.values import Value
from devlint.diagnostic import Severity

if TYPE_CHECKING:
    from devlint.core.imports import ModuleScope
    from devlint.core.scopes import FunctionInfo


@dataclass(frozen=True, eq=False)
class Operand:
    """One expression taking part in an operation, with its abstract value."""

    node: cst.BaseExpression
    value: Value
    role: str | None = None  # the keyword it was passed as (``weight=``), when known


@dataclass(frozen=True, eq=False)
class Event:
    """Something the analysis saw happen at ``node``, for the rules to judge."""

    node: cst.CSTNode


EventKind = TypeVar("EventKind", bound=Event)


ADVANCED_INDEXING = "advanced indexing"  # the operation of `t[idx]` with a tensor `idx`
INDEX_PUT = "indexed assignment"  # the operation of `t[idx] = v` with a tensor `idx`


@dataclass(frozen=True, eq=False)
class OperandsMeet(Event):
    """Tensors combined by an operator, a torch function or a tensor method.

    ``strict`` is False for elementwise ops, where PyTorch lets a cpu 0-dim
    tensor join a CUDA operation.
    """

    node: cst.CSTNode
    operation: str
    operands: tuple[Operand, ...]
    strict: bool
    function: cst.FunctionDef | None = None  # where it happens; None at module level
    elsewhere: cst.CSTNode | None = None
    """Where in another file's code this happened, when a call of this file (``node``) ran
    it with values from here; None: in this file."""
    root: FunctionInfo | None = None
    """The function whose run with unknown arguments this happened in (perhaps in code it
    calls); None: at module level, or in a call the module level makes."""
    root_site: cst.CSTNode | None = None
    """Where in ``root`` it happened: ``node``, or the call of ``root`` that led to it."""


@dataclass(frozen=True, eq=False)
class ModuleCall(Event):
    """A module (layer, model, loss) called with inputs."""

    node: cst.Call
    module: Operand
    inputs: tuple[Operand, ...]
    function: cst.FunctionDef | None = None
    elsewhere: cst.CSTNode | None = None
    """Where in another file's code this happened, when a call of this file (``node``) ran
    it with values from here; None: in this file."""
    root: FunctionInfo | None = None
    """The function whose run with unknown arguments this happened in (perhaps in code it
    calls); None: at module level, or in a call the module level makes."""
    root_site: cst.CSTNode | None = None
    """Where in ``root`` it happened: ``node``, or the call of ``root`` that led to it."""


@dataclass(frozen=True, eq=False)
class ArgumentsGiven(Event):
    """This file's ``node`` calls ``callee``, a function of this file or of another file of
    the project, giving each named parameter a value: what the analysis of the file that
    defines it asks of its callers (``core.callers``)."""

    node: cst.Call
    callee: FunctionInfo
    given: tuple[tuple[str, Value], ...]


@dataclass(frozen=True, eq=False)
class DiscardedTransfer(Event):
    """``x.to(...)``/``x.cuda()``/``x.cpu()`` on a tensor as a bare statement."""

    node: cst.Call
    receiver: Operand
    method: str


@dataclass(frozen=True, eq=False)
class HostConversion(Event):
    """``t.numpy()`` or ``np.array(t)``: a tensor turned into a NumPy array."""

    node: cst.Call
    tensor: Operand


@dataclass(frozen=True, eq=False)
class CheckpointLoad(Event):
    """``torch.load(...)``; ``map_location`` says whether one was given."""

    node: cst.Call
    map_location: bool
    scope: cst.FunctionDef | None  # the function it runs in; None at module level


@dataclass(frozen=True, eq=False)
class TensorMoved(Event):
    """``x.to(...)``, ``x.cuda()``, ``x.cpu()`` on a tensor: ``tensor`` as it was, and
    the copy the move returns."""

    node: cst.Call
    tensor: Operand
    moved: Value


@dataclass(frozen=True, eq=False)
class DeviceDefaultKept(Event):
    """``get_batch(keys)`` for ``def get_batch(keys, device="cuda")`` called where the caller
    holds its own run-time ``device``: the callee places its values on the hard-coded default."""

    node: cst.Call
    parameter: cst.Param  # the callee's device parameter, with its default
    default: Device  # the hard-coded accelerator the default names
    caller: Value  # what the caller holds under the same name


@dataclass(frozen=True, eq=False)
class SequencePacked(Event):
    """``pack_padded_sequence(input, lengths)`` given a tensor of lengths."""

    node: cst.Call
    lengths: Operand


@dataclass(frozen=True, eq=False)
class LoaderCreated(Event):
    """A ``DataLoader(...)`` call and what the analysis knows of its batches and workers."""

    node: cst.Call
    batches: Value  # where the collated batches live
    pin_memory: bool
    workers: int | None  # None: not a literal
    spawn: bool  # a spawn/forkserver multiprocessing_context was given


@dataclass(frozen=True, eq=False)
class UnsyncedRead(Event):
    """A non-blocking device-to-host copy read before any synchronisation."""

    node: cst.CSTNode
    copy: Operand


@dataclass(frozen=True, eq=False)
class WrapperCreated(Event):
    """``nn.DataParallel(model, ...)`` or ``DistributedDataParallel(model, ...)``."""

    node: cst.Call
    wrapper: Value  # ref: the WrapperInfo


@dataclass(frozen=True, eq=False)
class WrapperAttribute(Event):
    """``wrapped.name``: an attribute other than ``module`` read on a wrapper."""

    node: cst.Attribute
    wrapper: Value
    name: str


@dataclass(frozen=True, eq=False)
class WrapperCall(Event):
    """A wrapper called with inputs (its forward)."""

    node: cst.Call
    wrapper: Operand
    inputs: tuple[Operand, ...]


@dataclass(frozen=True, eq=False)
class CheckpointSave(Event):
    """``torch.save(payload, ...)``."""

    node: cst.Call
    payload: Value
    scope: cst.FunctionDef | None  # the function it runs in; None at module level


@dataclass(frozen=True, eq=False)
class StateDictLoad(Event):
    """``model.load_state_dict(...)`` on a model that is not wrapped."""

    node: cst.Call
    target: Operand


@dataclass(frozen=True, eq=False)
class Collective(Event):
    """A ``torch.distributed`` collective (``all_reduce``, ``broadcast``, ...) on tensors."""

    node: cst.Call
    operation: str
    tensors: tuple[Operand, ...]
    group: bool  # a ``group=`` was given: its backends are not in view
    elsewhere: cst.CSTNode | None = None
    """Where in another file's code this happened, when a call of this file (``node``) ran
    it with values from here; None: in this file."""


@dataclass(frozen=True, eq=False)
class ProcessGroupCreated(Event):
    """``init_process_group(...)`` / ``new_group(...)`` and the backend asked for.

    ``backend`` is the literal string, None when none was given or it is not a
    literal; ``given`` says whether a backend argument was passed at all.
    """

    node: cst.Call
    given: bool
    backend: str | None


@dataclass(frozen=True, eq=False)
class Clash:
    """Two operands whose devices conflict; ``first`` is the cpu side when there is one,
    else the side on a hard-coded accelerator (``.cuda()``) against a run-time device."""

    first: Operand
    second: Operand
    severity: Severity
    elsewhere: cst.CSTNode | None = None  # where in another file's code they meet


Claim = Callable[["Facts", "OperandsMeet | ModuleCall", Clash], bool]
"""A rule's decision that a clash is its own to report (``devlint/clash_owners.py`` orders
the claims)."""


class Layout(Protocol):
    """What the user sees of the analysed text: a file's lines, or a notebook's cells."""

    def line_name(self, line: int) -> str:
        """How messages name a line: ``line 8``, or ``line 4 of cell 2``."""
        ...

    def displays(self, line: int) -> bool:
        """Whether the value of a top-level expression ending on ``line`` is shown to the
        user (a notebook cell's last expression), not thrown away."""
        ...


class _FileLayout:
    def line_name(self, line: int) -> str:
        return f"line {line}"

    def displays(self, line: int) -> bool:
        return False


FILE_LAYOUT: Layout = _FileLayout()


class ProjectFiles(Importer, Protocol):
    """What a file's rules may ask of the rest of its project, beyond what its imports
    name."""

    def checkpoint_writers(self) -> list[AnalysedFile] | None:
        """The analyses of the project's other files that may write checkpoints (their code
        names ``torch`` and ``save``), test modules left out (None: not known)."""
        ...


@dataclass(frozen=True, eq=False)
class AnalysedFile:
    """Another file of the project, analysed: ``name`` is how messages name it (its path
    from the project's root), ``path`` where it is."""

    name: str
    path: str
    facts: Facts


@dataclass(eq=False)
class Facts:
    """Everything rules may ask about one analysed file."""

    module: cst.Module
    events: list[Event] = field(default_factory=list)  # in analysis order
    clashes: list[tuple[OperandsMeet | ModuleCall, Clash]] | None = None
    """Every clash the analysis believes (``conflicts.clashes`` finds them, once)."""
    clash_owners: list[tuple[OperandsMeet | ModuleCall, Clash, Claim]] | None = None
    """Each clash with the claim that reports it (the engine's ``clash_owners.assign``)."""
    cache: dict[str, object] = field(default_factory=dict)  # what rules derive, once per file
    runtime_device: bool = False  # the file picks its device at run time
    spawn_start_method: bool = False  # the file sets a spawn/forkserver start method
    sets_cuda_device: bool = False  # the file calls torch.cuda.set_device
    places_tensors: bool = False  # the file moves tensors, reads `.device`, passes `device=`
    test_module: bool = False  # a pytest module: nothing imports it
    importer: ProjectFiles | None = None  # what the project's other files hold, when known
    values: dict[cst.CSTNode, Value] = field(default_factory=dict)
    imported: list[ModuleScope] = field(default_factory=list)  # project modules it reached
    layout: Layout = field(default_factory=lambda: FILE_LAYOUT, repr=False)
    _positions: Positions | None = None

    _by_kind: dict[type[Event], list[Event]] = field(default_factory=dict, repr=False)

    def collect(self, events: list[Event]) -> None:
        """Keep the analysis' events, and sort them by kind for ``of``."""
        self.events = events
        self._by_kind = {}
        for event in events:
            self._by_kind.setdefault(type(event), []).append(event)

    def of(self, kind: type[EventKind]) -> list[EventKind]:
        """The events of one kind, in analysis order."""
        return self._by_kind.get(kind, [])  # type: ignore[return-value]

    def value_of(self, node: cst.CSTNode) -> Value | None:
        """The abstract value the analysis gave an expression (None if never reached)."""
        return self.values.get(node)

    def device_of(self, node: cst.CSTNode) -> Device:
        """Where the analysis says an expression's value lives (UNKNOWN if never reached)."""
        value = self.values.get(node)
        return value.device if value is not None else UNKNOWN

    def is_here(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is code of this file (not of another file of the project)."""
        try:
            self.span_of(node)
        except NotInModule:
            return False
        return True

    def span_of(self, node: cst.CSTNode) -> tuple[tuple[int, int], tuple[int, int]]:
        """(line, column) of the start and end of ``node``; 1-based lines, 0-based columns."""
        return self._positions_of_module().span(node)

    def line_before(self, node: cst.CSTNode) -> str:
        """The text of ``node``'s first line before ``node``."""
        return self._positions_of_module().line_before(node)

    def line_of(self, node: cst.CSTNode) -> int:
        return self.span_of(node)[0][0]

    def _positions_of_module(self) -> Positions:
        if self._positions is None:
            self._positions = Positions(self.module)
        return self._positions

    def code_of(self, node: cst.CSTNode, limit: int = 40) -> str:
        """Source text of ``node`` on one line, shortened for messages."""
        text = " ".join(self.module.code_for_node(node).split())
        return text if len(text) <= limit else text[: limit - 1] + "…"
