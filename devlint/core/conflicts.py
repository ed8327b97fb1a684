"""When operands cannot share an operation: PyTorch's device rules over abstract values.

A clash is reported by exactly one rule. ``cause_of`` names the most specific
reason, in this order: an unmoved DataLoader batch, a DataParallel output
meeting a tensor on another GPU, a plain tensor attribute
(or a module in a plain list), a factory without ``device=`` inside a function,
an indexing op, a loss weight; anything else is a generic mixed-device clash.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from devlint.core import torch_api
from devlint.core.events import ADVANCED_INDEXING, Facts, ModuleCall, Operand, OperandsMeet
from devlint.core.lattice import (
    CPU,
    MODULE_DEVICE,
    Concrete,
    Symbol,
    conflict,
    is_hard_coded_accelerator,
)
from devlint.core.syntax import is_rank_name, root_name
from devlint.core.values import LOADER_BATCH, NO_DEVICE, PLAIN_ATTRIBUTE, WRAPPER_OUTPUT, Kind
from devlint.diagnostic import Severity

INDEX_OPERATIONS = frozenset(
    {
        "index_select", "gather", "scatter", "scatter_", "scatter_add", "scatter_add_",
        "scatter_reduce", "scatter_reduce_", "take_along_dim", "embedding", "embedding_bag",
        "index_add", "index_add_", "index_copy", "index_copy_", ADVANCED_INDEXING,
    }
)  # fmt: skip
INDEX_MODULES = frozenset({"torch.nn.Embedding", "torch.nn.EmbeddingBag"})
LOSS_WEIGHTS = frozenset({"weight", "pos_weight"})
ELEMENTWISE_WEIGHT_LOSSES = frozenset({"torch.nn.BCEWithLogitsLoss", "torch.nn.BCELoss"})
CPU_OPERAND_MODULES = frozenset({"torch.nn.CTCLoss"})
"""Modules whose other inputs may stay on the CPU: CTC targets and lengths (cuDNN wants them
there; the native kernel moves them itself)."""


class Cause(enum.Enum):
    """Why two devices clash, from the most specific to the generic."""

    LOADER_BATCH = "loader batch"
    WRAPPER_OUTPUT = "data-parallel output"
    HARD_CODED = "hard-coded accelerator"
    PLAIN_ATTRIBUTE = "plain attribute"
    NO_DEVICE_FACTORY = "factory without device"
    INDEX = "indices"
    LOSS_WEIGHT = "loss weight"
    GENERIC = "generic"


@dataclass(frozen=True, eq=False)
class Clash:
    """Two operands whose devices conflict; ``first`` is the cpu side when there is one,
    else the side on a hard-coded accelerator (``.cuda()``) against a run-time device."""

    first: Operand
    second: Operand
    severity: Severity
    cause: Cause = Cause.GENERIC


def _clash(a: Operand, b: Operand, strict: bool) -> Clash | None:
    severity = conflict(a.value.device, b.value.device) or _gathered_elsewhere(a, b)
    if severity is None:
        return None
    if b.value.device == CPU or _hard_coded(b, a):
        a, b = b, a
    if not strict and a.value.device == CPU and a.value.ndim != 1:
        return None  # a cpu 0-dim tensor may join a CUDA elementwise op (or it may be one)
    if _hard_coded(a, b) and (_gpu_index(b.value.device) or (not strict and b.value.ndim == 0)):
        return None  # `cuda:{rank}` is the current GPU after set_device; a cpu 0-dim may join
    return Clash(a, b, severity)


def _hard_coded(a: Operand, b: Operand) -> bool:
    """``a`` sits on a literal accelerator, ``b`` on a device chosen at run time."""
    return is_hard_coded_accelerator(a.value.device) and isinstance(b.value.device, Symbol)


def _gpu_index(device: object) -> bool:
    """A symbol naming this process's GPU (``args.gpu``, ``cuda:{local_rank}``)."""
    return isinstance(device, Symbol) and (":" in device.name or is_rank_name(device.name))


def _most_certain(operands: tuple[Operand, ...], strict: bool) -> Clash | None:
    best: Clash | None = None
    for i, first in enumerate(operands):
        for second in operands[i + 1 :]:
            found = _clash(first, second, strict)
            if found is not None and (best is None or found.severity is Severity.ERROR):
                best = found
                if found.severity is Severity.ERROR:
                    return best
    return best


def clashes(facts: Facts) -> list[tuple[OperandsMeet | ModuleCall, Clash]]:
    """Every clash in a file with the event showing it, in analysis order (computed once)."""
    found = facts.cache.get("clashes")
    if found is None:
        found = []
        for event in facts.events:
            clash = clash_of(event, facts)
            if clash is not None:
                found.append((event, clash))
        facts.cache["clashes"] = found
    return found


def clashes_with_cause(facts: Facts, cause: Cause) -> Iterator[tuple[object, Clash]]:
    return ((event, clash) for event, clash in clashes(facts) if clash.cause is cause)


def first_per_source(found: Iterable[tuple[object, Clash]]) -> Iterator[tuple[object, Clash]]:
    """One clash per cpu-side source (a batch element, an attribute, a factory call):
    the first use is what fails; the fix is at the source."""
    seen: set[tuple[int, str]] = set()
    for event, clash in found:
        origin = clash.first.value.origin
        key = (
            id(origin.node) if origin is not None else id(clash.first),
            root_name(clash.first.node),
        )
        if key not in seen:
            seen.add(key)
            yield event, clash


def clash_of(event: object, facts: Facts) -> Clash | None:
    """The clash an event shows, with its cause, or None."""
    if isinstance(event, OperandsMeet):
        clash = _most_certain(event.operands, event.strict)
        module = None
    elif isinstance(event, ModuleCall):
        clash, module = _module_clash(event), event.module
    else:
        return None
    if clash is None or not _believed(clash, event, facts):
        return None
    return Clash(clash.first, clash.second, clash.severity, _cause(clash, event, module, facts))


def _believed(clash: Clash, event: OperandsMeet | ModuleCall, facts: Facts) -> bool:
    """Clashes with a device chosen at run time that the analysis can justify.

    A hard-coded accelerator counts only where the code names it literally
    (``.cuda()``, ``device="cuda"``), not where it flowed in from a caller's
    context. A cpu value meets a tensor parameter's device only when it was made
    in the same function, in a file that places tensors at all: values from
    elsewhere (attributes of classes whose base is not visible, globals) and
    CPU-only data code stay silent.
    """
    device = clash.second.value.device
    origin = clash.first.value.origin
    if not isinstance(device, Symbol):
        return True
    if is_hard_coded_accelerator(clash.first.value.device):
        return (
            facts.runtime_device  # GPU-only code hard-codes `.cuda()` everywhere, consistently
            and (device.tensor or device == MODULE_DEVICE)
            and origin is not None
            and origin.subject is None
        )
    if not device.tensor:
        return True
    function = event.function
    return (
        facts.places_tensors
        and function is not None
        and origin is not None
        and _inside(facts, origin.node, function.body)
    )


def _module_clash(call: ModuleCall) -> Clash | None:
    """A module whose parameters sit elsewhere than its input, or a stateless module
    (a loss, an activation) whose inputs disagree with each other."""
    module = call.module.value
    if module.kind is not Kind.MODULE:
        return None
    if module.stateful:
        strict = module.ref not in ELEMENTWISE_WEIGHT_LOSSES  # pos_weight may be a cpu scalar
        for operand in call.inputs:
            found = _clash(operand, call.module, strict)
            if found is not None:
                return found
        return None
    if module.stateful is False and module.ref not in CPU_OPERAND_MODULES:
        return _most_certain(call.inputs, strict=True)
    return None


def _cause(clash: Clash, event: object, module: Operand | None, facts: Facts) -> Cause:
    tag = clash.first.value.origin.tag if clash.first.value.origin is not None else None
    if tag == LOADER_BATCH:
        return Cause.LOADER_BATCH
    if _wrapper_output_on_another_gpu(clash):
        return Cause.WRAPPER_OUTPUT
    if _hard_coded(clash.first, clash.second):
        return Cause.HARD_CODED  # _believed checked that the accelerator is a literal
    if tag == PLAIN_ATTRIBUTE:
        return Cause.PLAIN_ATTRIBUTE
    involves_module = module is not None and module in (clash.first, clash.second)
    qualname = module.value.ref if involves_module and isinstance(module.value.ref, str) else ""
    if clash.first is module and qualname and torch_api.is_loss(qualname):
        return Cause.LOSS_WEIGHT  # the criterion's own weight is on the cpu
    if tag == NO_DEVICE and event.function is not None:
        partner = clash.second.value.origin
        if partner is None or not _inside(facts, partner.node, event.function.body):
            return Cause.NO_DEVICE_FACTORY  # it meets what came in: inputs, arguments, self
    if isinstance(event, OperandsMeet) and event.operation in INDEX_OPERATIONS:
        return Cause.INDEX
    if qualname in INDEX_MODULES:
        return Cause.INDEX
    if clash.first.role in LOSS_WEIGHTS or clash.second.role in LOSS_WEIGHTS:
        return Cause.LOSS_WEIGHT
    if qualname and torch_api.is_loss(qualname):
        return Cause.LOSS_WEIGHT
    return Cause.GENERIC


def _gathered_elsewhere(a: Operand, b: Operand) -> Severity | None:
    """A DataParallel output gathered on ``cuda:k`` (k > 0) against bare ``cuda``, which is
    the current device, cuda:0, in a single-process DataParallel script."""
    for output, other in ((a.value, b.value), (b.value, a.value)):
        gathered = output.origin is not None and output.origin.tag == WRAPPER_OUTPUT
        device, plain = output.device, other.device
        if (
            gathered
            and isinstance(device, Concrete)
            and device.index
            and isinstance(plain, Concrete)
            and plain.type == "cuda"
            and plain.index is None
        ):
            return Severity.ERROR
    return None


def _wrapper_output_on_another_gpu(clash: Clash) -> bool:
    """A DataParallel output (on its output device) meeting a tensor moved to another GPU."""
    sides = (clash.first.value, clash.second.value)
    tagged = any(v.origin is not None and v.origin.tag == WRAPPER_OUTPUT for v in sides)
    return tagged and all(v.device != CPU for v in sides)


def _inside(facts: Facts, node: object, body: object) -> bool:
    (start, end), (outer_start, outer_end) = facts.span_of(node), facts.span_of(body)
    return outer_start <= start and end <= outer_end
