"""When operands cannot share an operation: PyTorch's device rules over abstract values.

``clashes`` finds every clash the analysis can justify in a file. Which rule
reports each one is the rules' decision, not the core's: see
``devlint/clash_owners.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

import libcst as cst

from devlint.core import torch_facts
from devlint.core.callers import given_host_data_only, rests_on_no_caller
from devlint.core.events import (
    Clash,
    Collective,
    Event,
    Facts,
    ModuleCall,
    Operand,
    OperandsMeet,
)
from devlint.core.lattice import (
    CPU,
    MODULE_DEVICE,
    Concrete,
    Symbol,
    conflict,
    is_hard_coded_accelerator,
)
from devlint.core.positions import NotInModule
from devlint.core.syntax import is_rank_name, names_a_device, root_name
from devlint.core.values import (
    WRAPPER_OUTPUT,
    Kind,
    has_dimension,
)
from devlint.diagnostic import Severity

_NAMES_A_DEVICE = "names a device"  # facts.cache key


def _clash(a: Operand, b: Operand, strict: bool) -> Clash | None:
    severity = conflict(a.value.device, b.value.device) or _gathered_elsewhere(a, b)
    if severity is None:
        return None
    if b.value.device == CPU or hard_coded(b, a):
        a, b = b, a
    if not strict and a.value.device == CPU and not has_dimension(a.value):
        return None  # a cpu 0-dim tensor may join a CUDA elementwise op (or it may be one)
    if hard_coded(a, b) and (_gpu_index(b.value.device) or (not strict and b.value.ndim == 0)):
        return None  # `cuda:{rank}` is the current GPU after set_device; a cpu 0-dim may join
    return Clash(a, b, severity)


def hard_coded(a: Operand, b: Operand) -> bool:
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
    """Every clash the analysis believes, with the event showing it, in analysis order
    (computed once per file)."""
    found = facts.clashes
    if found is None:
        found = []
        sites: set[cst.CSTNode] = set()  # calls whose other-file code already clashed
        for event in facts.events:
            clash = clash_of(event, facts)
            if clash is None or event.node in sites:
                continue
            if event.elsewhere is not None:
                sites.add(event.node)  # the first clash in there is what fails
            found.append((event, clash))
        facts.clashes = found
    return found


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


def clash_of(event: Event, facts: Facts) -> Clash | None:
    """The clash an event shows, if the analysis can justify it, or None."""
    if isinstance(event, OperandsMeet):
        clash = _most_certain(event.operands, event.strict)
    elif isinstance(event, ModuleCall):
        clash = _module_clash(event)
    else:
        return None
    if clash is None or not _believed(clash, event, facts):
        return None
    if event.elsewhere is not None:
        origin = clash.first.value.origin
        if origin is None or not facts.is_here(origin.node):
            return None  # another file's code on its own values: that file reports it
        first, second = (
            _as_passed(facts, event.node, side) for side in (clash.first, clash.second)
        )
        return replace(clash, first=first, second=second, elsewhere=event.elsewhere)
    return clash


def _as_passed(facts: Facts, call: cst.CSTNode, side: Operand) -> Operand:
    """The argument (or receiver) of this file's ``call`` that holds ``side``'s value, so that
    the message names what the caller wrote rather than the other file's parameter."""
    if not isinstance(call, cst.Call):
        return side
    given = [arg.value for arg in call.args]
    if isinstance(call.func, cst.Attribute):
        given.append(call.func.value)  # `model.generate(x)`: the model is `self` there
    for node in given:
        value = facts.values.get(node)
        if (
            value is not None
            and value.origin is side.value.origin
            and value.device == side.value.device
        ):
            return replace(side, node=node)
    return side


def _believed(clash: Clash, event: OperandsMeet | ModuleCall, facts: Facts) -> bool:
    """Clashes with a device chosen at run time that the analysis can justify.

    A hard-coded accelerator counts only where the code names it literally
    (``.cuda()``, ``device="cuda"``), not where it flowed in from a caller's
    context, and not against a value the program moved to its device variable
    when it picks its process's GPU (``torch.cuda.set_device``, maybe in a
    helper it calls): a bare ``.cuda()`` is then that same GPU. A cpu value
    meets a tensor parameter's device only when it was made in the same
    function, in a file that places tensors at all: values from
    elsewhere (attributes of classes whose base is not visible, globals) and
    CPU-only data code stay silent, and so does a parameter that every call in the
    project's other files gives CPU data (``core.callers``).
    """
    device = clash.second.value.device
    origin = clash.first.value.origin
    if not isinstance(device, Symbol):
        return True
    if is_hard_coded_accelerator(clash.first.value.device):
        return (
            facts.runtime_device  # GPU-only code hard-codes `.cuda()` everywhere, consistently
            and not _moved_to_the_chosen_gpu(clash, facts)
            and (device.tensor or device == MODULE_DEVICE)
            and origin is not None
            and origin.subject is None
            and not _reduced_in_a_process_group(clash, event, facts)  # reads every event: last
        )
    if not device.tensor:
        if device != MODULE_DEVICE:
            return True
        return _modules_may_be_placed(facts) and not rests_on_no_caller(event, facts)
    function = event.function
    return (
        facts.places_tensors
        and function is not None
        and origin is not None
        and inside(facts, origin.node, function.body)
        and not rests_on_no_caller(event, facts)
        and not given_host_data_only(clash, event, facts)
    )


def _modules_may_be_placed(facts: Facts) -> bool:
    """A module is on a GPU only where some code puts it there. Nothing imports a pytest
    module, so the models it defines go only where its own code sends them: in one that
    names no device at all, "fails when the module's device is a GPU" cannot happen."""
    if not facts.test_module:
        return True
    named = facts.cache.get(_NAMES_A_DEVICE)
    if named is None:
        named = facts.cache[_NAMES_A_DEVICE] = names_a_device(facts.module)
    return named


def _reduced_in_a_process_group(
    clash: Clash, event: OperandsMeet | ModuleCall, facts: Facts
) -> bool:
    """``.cuda()`` meeting a tensor whose device the same function hands to a collective
    (``dist.all_reduce(torch.sum(Q))``, or a helper of the project's that does): the
    tensor is on this process's GPU, chosen where the process group was set up
    (``torch.cuda.set_device``, often in another file), and a bare ``.cuda()`` is that
    GPU too."""
    function, device = event.function, clash.second.value.device
    return function is not None and any(
        isinstance(other, Collective)
        and inside(facts, other.node, function.body)
        and any(tensor.value.device == device for tensor in other.tensors)
        for other in facts.events
    )


def _moved_to_the_chosen_gpu(clash: Clash, facts: Facts) -> bool:
    """``x.cuda()`` meeting ``y.to(args.device)`` in a program that calls
    ``torch.cuda.set_device``: both are this process's GPU (a tensor passed in, which
    may be on the cpu, is another matter)."""
    origin = clash.second.value.origin
    return (
        facts.sets_cuda_device
        and clash.first.value.device == Concrete("cuda")
        and origin is not None
        and origin.verb.startswith("moved to")
    )


def _module_clash(call: ModuleCall) -> Clash | None:
    """A module whose parameters sit elsewhere than its input, or a stateless module
    (a loss, an activation) whose inputs disagree with each other."""
    module = call.module.value
    if module.kind is not Kind.MODULE:
        return None
    if module.stateful:
        # a cpu scalar pos_weight is no clash: the loss combines it elementwise
        strict = module.ref not in torch_facts.ELEMENTWISE_WEIGHT_LOSSES
        for operand in call.inputs:
            found = _clash(operand, call.module, strict)
            if found is not None:
                return found
        return None
    if module.stateful is False and module.ref not in torch_facts.CPU_OPERAND_MODULES:
        return _most_certain(call.inputs, strict=True)
    return None


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


def wrapper_output_on_another_gpu(clash: Clash) -> bool:
    """A DataParallel output (on its output device) meeting a tensor moved to another GPU."""
    sides = (clash.first.value, clash.second.value)
    tagged = any(v.origin is not None and v.origin.tag == WRAPPER_OUTPUT for v in sides)
    return tagged and all(v.device != CPU for v in sides)


def inside(facts: Facts, node: object, body: object) -> bool:
    """Whether ``node`` lies within ``body`` in the source (a node of another file of the
    project, such as where an imported module placed itself, does not)."""
    try:
        (start, end), (outer_start, outer_end) = facts.span_of(node), facts.span_of(body)
    except NotInModule:
        return False
    return outer_start <= start and end <= outer_end


def source_tag(clash: Clash) -> str | None:
    """The tag of the cpu side's origin (a loader batch, a plain attribute, ...), if any."""
    origin = clash.first.value.origin
    return origin.tag if origin is not None else None


def called_module(event: Event, clash: Clash) -> str:
    """The qualified name of the module a ``ModuleCall`` calls, when that module is one
    side of the clash ("" otherwise)."""
    module = event.module if isinstance(event, ModuleCall) else None
    if module is None or module not in (clash.first, clash.second):
        return ""
    return module.value.ref if isinstance(module.value.ref, str) else ""
