"""Abstract values: what kind of thing an expression is, where it lives, and why.

The ``origin`` says how a value got its device ("created at line 8", "batch
from `train_loader`"), so every finding can name where each side came from.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, replace

import libcst as cst

from devlint.core.lattice import (
    BOTTOM,
    CPU,
    MODULE_DEVICE,
    UNKNOWN,
    Device,
    Symbol,
    can_be_accelerator,
    is_hard_coded_accelerator,
    is_known,
    join,
)


class Kind(enum.Enum):
    TENSOR = "tensor"
    MODULE = "module"
    WRAPPER = "data-parallel wrapper"
    LOADER = "dataloader"
    DATASET = "dataset"
    BATCH = "batch"
    DEVICE = "device"
    OPTIMIZER = "optimizer"
    DISTRIBUTION = "probability distribution"  # ref: the expressions of its parameters
    SEQUENCE = "sequence"
    MAPPING = "mapping"
    ITERABLE = "iterable"
    INSTANCE = "instance"
    FUNCTION = "function"
    CLASS = "class"
    NAMESPACE = "namespace"
    PROJECT_MODULE = "module of the project"  # ref: its ModuleScope
    SCALAR = "scalar"
    STRING = "string"
    DTYPE = "dtype"
    NONE = "none"
    UNKNOWN = "unknown"


@dataclass(frozen=True, eq=False)
class Origin:
    """Why a value is where it is: ``verb`` at ``node``.

    ``verb`` may hold one ``{}``, filled with the source text of ``subject`` when
    a message is written ("moved to {}" → "moved to `device`"), so no text is
    produced for files without findings. ``tag`` marks sources that a specific
    rule owns (DataLoader batches, factories without ``device=`` …).
    """

    verb: str
    node: cst.CSTNode
    subject: cst.CSTNode | None = None
    tag: str | None = None  # one of the tags below: what kind of source this is

    @property
    def from_loader(self) -> bool:
        return self.tag == LOADER_BATCH


LOADER_BATCH = "loader-batch"  # a DataLoader batch (or part of one)
NO_DEVICE = "no-device"  # a factory called without device=
PLAIN_ATTRIBUTE = "plain-attribute"  # a tensor or module kept on a module without registering
ASYNC_COPY = "async-copy"  # a non-blocking device-to-host copy, not yet synchronised
WRAPPER_OUTPUT = "wrapper-output"  # gathered by DataParallel on its output device
WRAPPED_STATE = "wrapped-state"  # a state_dict taken through a DataParallel/DDP wrapper

PARAMETER = "parameter"  # ``ref`` of a tensor registered as a parameter
BUFFER = "buffer"  # ``ref`` of a tensor registered as a buffer
FROZEN = "frozen"  # ``ref`` of a plain tensor marked ``requires_grad_(False)``: a placeholder
REGISTERED_ON_SOME_PATHS = "registered on some paths"  # ``ref``: state or a frozen placeholder
_STATE = frozenset({PARAMETER, BUFFER})
_SOME_STATE = _STATE | {REGISTERED_ON_SOME_PATHS}


class Referent:
    """What a value's ``ref`` points at beyond a name or a number: a local function or
    class (``scopes``), a wrapper's arguments, a project module (``imports``), a
    distribution's parameters, the lengths of a tuple, a marker. Each is defined beside
    what it describes and subclasses this, so ``Ref`` names them without importing them."""

    __slots__ = ()


@dataclass(frozen=True)
class Marker(Referent):
    """A ``ref`` that only says what a value is (the unknown result of a call)."""

    name: str


Ref = Referent | str | int | None
"""What ``Value.ref`` holds: a qualified name, a marker string (``PARAMETER``), a literal
integer, or a ``Referent``."""


@dataclass(frozen=True, eq=False)
class Value:
    """The abstract value of an expression.

    ``ndim`` is 0 for a known 0-dim tensor, k >= 1 for "at least k dimensions"
    (``has_dimension``) and None when unknown. ``items`` are the elements of a
    fixed-size sequence, the values of a mapping or the attributes of an instance
    (named by ``keys``); ``element`` is what iterating yields (for a mapping: the
    type of its values). ``stateful`` says whether a module owns parameters or
    buffers (None: unknown). ``ref`` points at what a callable or instance is (a
    qualified torch name, a local function or class: see ``Ref``).
    """

    kind: Kind
    device: Device = UNKNOWN
    origin: Origin | None = None
    ndim: int | None = None
    items: tuple[Value, ...] | None = None
    keys: tuple[str, ...] | None = None
    element: Value | None = None
    stateful: bool | None = None
    ref: Ref = None

    def with_device(self, device: Device, origin: Origin | None) -> Value:
        return replace(self, device=device, origin=origin)

    def same(self, other: Value) -> bool:
        """Equality that matters for fixpoints: kind, device and structure."""
        if self is other:
            return True
        return (
            self.kind is other.kind
            and self.device == other.device
            and self.ndim == other.ndim
            and self.stateful == other.stateful
            and (self.ref is other.ref or self.ref == other.ref)
            and self.keys == other.keys
            and _same_opt(self.element, other.element)
            and _same_tuple(self.items, other.items)
        )


def _same_opt(a: Value | None, b: Value | None) -> bool:
    return a is b or (a is not None and b is not None and a.same(b))


def _same_tuple(a: tuple[Value, ...] | None, b: tuple[Value, ...] | None) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(x.same(y) for x, y in zip(a, b, strict=True))


UNKNOWN_VALUE = Value(Kind.UNKNOWN)
_NAMED_KINDS = frozenset({Kind.NAMESPACE, Kind.PROJECT_MODULE, Kind.FUNCTION, Kind.CLASS})
_MODULE_LIKE = frozenset({Kind.MODULE, Kind.WRAPPER, Kind.UNKNOWN})
NONE_VALUE = Value(Kind.NONE, BOTTOM)
SCALAR_VALUE = Value(Kind.SCALAR, BOTTOM)
TRUE_VALUE = Value(Kind.SCALAR, BOTTOM, ref="True")  # the literals, so `if first:` can be decided
FALSE_VALUE = Value(Kind.SCALAR, BOTTOM, ref="False")
CUDA_AVAILABLE = "whether CUDA is available"  # ``ref`` of ``torch.cuda.is_available()``
AVAILABILITY_VALUE = Value(Kind.SCALAR, BOTTOM, ref=CUDA_AVAILABLE)


def truth(value: Value) -> bool | None:
    """True or False for a value known to be that literal, else None."""
    if value.kind is Kind.SCALAR and value.ref in ("True", "False"):
        return value.ref == "True"
    return None


_ITERATED = frozenset({Kind.ITERABLE, Kind.SEQUENCE})
"""Two kinds a ``for`` loop reads alike: an iterable on one path, a list on the other."""


def join_values(a: Value, b: Value, *, guarded: bool = False) -> Value:
    """Least upper bound of two values at a merge point."""
    if a is b:
        return a
    if a.kind is Kind.NONE:
        return b
    if b.kind is Kind.NONE:
        return a
    if {a.kind, b.kind} == _ITERATED:  # `named_parameters()` or a list of some of them
        element = join_values(element_of(a), element_of(b), guarded=guarded)
        return Value(Kind.ITERABLE, element=element)
    if a.kind is not b.kind:
        return _join_module_like(a, b, guarded)
    if a.kind is Kind.SEQUENCE and (a.items == () or b.items == ()):
        return _join_grown(a, b)
    if a.kind is Kind.SEQUENCE and _lengths_differ(a, b):
        return _join_lengths(a, b, guarded)
    same_ref = a.ref is b.ref or a.ref == b.ref
    if not same_ref and a.kind in _NAMED_KINDS:
        return UNKNOWN_VALUE
    if not same_ref and a.ref in _STATE and b.ref in _STATE:
        same_ref = True  # a parameter on one path, a buffer on the other: state either way
    if not same_ref and a.kind is Kind.WRAPPER:
        return _join_wrappers(a, b, join(a.device, b.device, guarded=guarded))
    device = join(a.device, b.device, guarded=guarded)
    if device == a.device:
        origin = a.origin
    elif device == b.device:
        origin = b.origin
    else:
        origin = _accelerator_side(a, b) if device is not UNKNOWN else None
    return Value(
        a.kind,
        device,
        origin,
        join_ndim(a.ndim, b.ndim),
        _join_items(a.items, b.items, guarded),
        a.keys if a.keys == b.keys else None,
        _join_opt(a.element, b.element, guarded),
        a.stateful if a.stateful == b.stateful else None,
        a.ref if same_ref else _join_registered(a.ref, b.ref),
    )


def _join_registered(a: object, b: object) -> object:
    """A parameter on one path and a buffer on the other: registered either way, so
    ``Module.to()`` moves it (joined as a parameter). A parameter on one path and a frozen
    placeholder on the other (speechbrain's layers without a bias): which one a module
    holds, and so where it is, depends on its configuration."""
    refs = {a, b}
    if refs == {PARAMETER, BUFFER}:
        return PARAMETER
    if refs & _SOME_STATE and refs <= _SOME_STATE | {FROZEN}:
        return REGISTERED_ON_SOME_PATHS
    return None


def _join_module_like(a: Value, b: Value, guarded: bool) -> Value:
    """A module on one path and its wrapper (or an unknown callable) on the other.

    Module and DataParallel wrapper: a wrapper that is there on some machines
    only (``conditional``). Otherwise the kind is lost and the device is kept
    when both agree.
    """
    if a.kind not in _MODULE_LIKE or b.kind not in _MODULE_LIKE:
        return UNKNOWN_VALUE
    device = join(a.device, b.device, guarded=guarded)
    kinds = {a.kind, b.kind}
    if kinds == {Kind.MODULE, Kind.WRAPPER} or _wraps_the_other(a, b):
        wrapper = a if a.kind is Kind.WRAPPER else b
        if wrapper.ref is None:  # wrappers made by different calls, joined before: which is lost
            return Value(Kind.WRAPPER, device, wrapper.origin, stateful=True)
        info = replace(wrapper.ref, conditional=True)
        return Value(Kind.WRAPPER, device, wrapper.origin, stateful=True, ref=info)
    if device is UNKNOWN:
        return UNKNOWN_VALUE
    return Value(Kind.UNKNOWN, device, a.origin if device == a.device else b.origin)


def _join_wrappers(a: Value, b: Value, device: Device) -> Value:
    """Wrappers made by different calls (``model = DataParallel(model)`` in both branches):
    of one kind, a wrapper either way, named by the first; there on some machines only when
    either is."""
    kind = getattr(a.ref, "kind", None)
    if kind is None or kind != getattr(b.ref, "kind", None):
        return Value(Kind.WRAPPER, device, a.origin, stateful=True)
    conditional = a.ref.conditional or b.ref.conditional
    return Value(
        Kind.WRAPPER, device, a.origin, stateful=True, ref=replace(a.ref, conditional=conditional)
    )


@dataclass(frozen=True)
class Lengths(Referent):
    """``ref`` of a tuple with a different length on different paths (a dataset's
    ``__getitem__`` returning three items in test mode and four otherwise): its items
    per length, since unpacking four names can only succeed on the four-item path."""

    alternatives: tuple[tuple[Value, ...], ...]


def _alternatives(value: Value) -> tuple[tuple[Value, ...], ...]:
    if isinstance(value.ref, Lengths):
        return value.ref.alternatives
    return () if value.items is None else (value.items,)


def _lengths_differ(a: Value, b: Value) -> bool:
    first, second = _alternatives(a), _alternatives(b)
    if not first or not second:
        return False
    return isinstance(a.ref, Lengths) or isinstance(b.ref, Lengths) or len(a.items) != len(b.items)


def _join_lengths(a: Value, b: Value, guarded: bool) -> Value:
    by_length: dict[int, tuple[Value, ...]] = {}
    for items in _alternatives(a) + _alternatives(b):
        seen = by_length.get(len(items))
        by_length[len(items)] = items if seen is None else _join_items(seen, items, guarded)
    alternatives = tuple(by_length[length] for length in sorted(by_length))
    element = join_all([item for items in alternatives for item in items])
    device = join(a.device, b.device, guarded=guarded)
    return Value(Kind.SEQUENCE, device, element=element, ref=Lengths(alternatives))


def items_of_length(value: Value, length: int) -> tuple[Value, ...] | None:
    """The items of ``value`` on the paths where it has ``length`` of them, if known."""
    return next((items for items in _alternatives(value) if len(items) == length), None)


def item_at(value: Value, index: int) -> Value | None:
    """``value[index]`` on the paths where it has that item (others raise), if known."""
    found = [items[index] for items in _alternatives(value) if -len(items) <= index < len(items)]
    return join_all(found) if found else None


def _join_grown(a: Value, b: Value) -> Value:
    """``[]`` on one path and the list grown by ``append`` on another: what it may hold."""
    grown = b if a.items == () else a
    if grown.items == ():
        return grown
    return Value(Kind.SEQUENCE, element=element_of(grown))


def appended(sequence: Value, element: Value) -> Value:
    """A list after ``append(element)``: it may hold what it held and ``element``."""
    if sequence.items == ():
        return Value(Kind.SEQUENCE, element=element)
    return Value(Kind.SEQUENCE, element=join_values(element_of(sequence), element))


def _wraps_the_other(a: Value, b: Value) -> bool:
    """``model = build(); if n > 1: model = DDP(model)``: the wrapper on one path wraps
    the (imported, unknown) model of the other."""
    wrapper, other = (a, b) if a.kind is Kind.WRAPPER else (b, a)
    inner = getattr(wrapper.ref, "inner", None)
    return (
        wrapper.kind is Kind.WRAPPER
        and other.kind is Kind.UNKNOWN
        and inner is not None
        and inner.device == other.device
        and inner.origin is other.origin
    )


USED_AS_MODULE = "used as a module"  # ``ref`` of a model whose class is defined elsewhere
CALL_RESULT = Marker("call result")  # ``ref`` of the unknown result of a call (a module?)
ONE_PATH = Marker("made on one path")
"""``ref`` of a cpu tensor an ``if`` made on one of its paths and the join kept: it holds on
that path within the function, not as what the function returns."""


def used_as_module(value: Value) -> Value:
    """A value that usage proves is an ``nn.Module`` (``m.parameters()``, ``DDP(m)``) though
    its class is elsewhere: a model, so it owns parameters."""
    return Value(Kind.MODULE, value.device, value.origin, stateful=True, ref=USED_AS_MODULE)


def _accelerator_side(a: Value, b: Value) -> Origin | None:
    return b.origin if a.device == CPU else a.origin


def _join_opt(a: Value | None, b: Value | None, guarded: bool) -> Value | None:
    if a is None or b is None:
        return None
    return join_values(a, b, guarded=guarded)


def _join_items(
    a: tuple[Value, ...] | None, b: tuple[Value, ...] | None, guarded: bool
) -> tuple[Value, ...] | None:
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(join_values(x, y, guarded=guarded) for x, y in zip(a, b, strict=True))


def result_base(values: list[Value]) -> Value | None:
    """The operand whose device an op's result lives on: the first on a known device, except
    that a cpu operand that may be 0-dim (PyTorch lets it join) yields to one on another
    device, or to one the analysis cannot see (the result is then unknown), and a
    hard-coded accelerator yields to a device chosen at run time. None: nothing known."""
    known = [value for value in values if is_known(value.device)]
    if not known:
        return None
    best = known[0]
    for value in known[1:]:
        if (best.device == CPU and not has_dimension(best) and value.device != CPU) or (
            is_hard_coded_accelerator(best.device) and isinstance(value.device, Symbol)
        ):
            best = value
    if best.device == CPU and not has_dimension(best) and len(known) < len(values):
        return Value(Kind.TENSOR)
    return best


def element_of(value: Value) -> Value:
    """What iterating over ``value`` yields (unknown when we cannot tell)."""
    if value.element is not None and value.kind is not Kind.MAPPING:
        return value.element
    if value.kind is Kind.MAPPING:
        return Value(Kind.STRING)
    if value.items:
        return join_all(value.items)
    if value.kind is Kind.TENSOR:
        return Value(Kind.TENSOR, value.device, value.origin)
    if value.kind is Kind.MODULE:  # an nn.ModuleList / Sequential: its members live with it
        return Value(Kind.MODULE, value.device, value.origin, stateful=value.stateful)
    if value.kind is Kind.BATCH:
        return batch_part(value)
    return UNKNOWN_VALUE


def join_all(values: tuple[Value, ...] | list[Value]) -> Value:
    """Join of a non-empty collection of values."""
    result = values[0]
    for value in values[1:]:
        result = join_values(result, value)
    return result


def batch_part(batch: Value) -> Value:
    """A tensor taken out of a DataLoader batch: same device and origin, ndim >= 1."""
    return Value(Kind.TENSOR, batch.device, batch.origin, ndim=1)


def parts(value: Value) -> Iterator[Value]:
    """``value`` and everything inside it: items, elements, their items…"""
    stack = [value]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.items or ())
        if current.element is not None:
            stack.append(current.element)


def accelerator_inside(value: Value) -> Device | None:
    """An accelerator device anywhere inside ``value`` (a dataset item), else None."""
    return next((part.device for part in parts(value) if can_be_accelerator(part.device)), None)


def is_tensor_like(value: Value) -> bool:
    """A tensor, or something of unknown kind that was moved to a device (so a tensor)."""
    return value.kind is Kind.TENSOR or (value.kind is Kind.UNKNOWN and is_known(value.device))


def has_dimension(value: Value) -> bool:
    """Whether a tensor is known to have at least one dimension (so it is no cpu 0-dim
    operand, which PyTorch lets join a CUDA elementwise op)."""
    return value.ndim is not None and value.ndim >= 1


def join_ndim(a: int | None, b: int | None) -> int | None:
    """What two paths agree on: the same ndim, or the fewer of two lower bounds."""
    if a == b:
        return a
    if a is not None and b is not None and a >= 1 and b >= 1:
        return min(a, b)
    return None


def combined_ndim(values: list[Value]) -> int | None:
    """ndim of an elementwise result: broadcasting keeps the most dimensions of any operand."""
    bounds = [value.ndim for value in values if has_dimension(value)]
    if bounds:
        return max(bounds)
    if values and all(value.ndim == 0 for value in values):
        return 0
    return None


def is_state(value: Value) -> bool:
    """A submodule, parameter or buffer: what ``Module.to()`` moves."""
    return value.kind in (Kind.MODULE, Kind.WRAPPER) or value.ref in (PARAMETER, BUFFER)


def placed_state(value: Value, device: Device, origin: Origin | None) -> Value:
    """What a module class's method sees of ``self.<name>`` on a module placed on ``device``:
    its submodules, parameters and buffers are there."""
    if value.device == MODULE_DEVICE and is_state(value):
        return value.with_device(device, origin)
    return value
