"""DVL103: a tensor created without device= inside a function meets a tensor on a device."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from functools import partial

import libcst as cst

from devlint.core.torch_facts import RANDOM_FACTORIES
from devlint.core.torch_model import is_legacy_constructor
from devlint.core.conflicts import first_per_source, inside, source_tag
from devlint.rulekit.describe import clash_phrase
from devlint.core.events import Clash, Event, Facts, ModuleCall, OperandsMeet
from devlint.core.syntax import dotted_name, expression_nodes, last_name
from devlint.core.values import NO_DEVICE, Kind, Value
from devlint.diagnostic import Severity
from devlint.rulekit.fixes import ancestors, is_bound_at, with_keyword
from devlint.rule import ClashRule, Finding, Fix, RuleMeta, RuntimeExpectation

ADVICE = (
    "create it where its partner lives (`device=x.device`, `x.new_zeros(...)`, "
    "`torch.zeros_like(x)`)"
)


def claims(facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> bool:
    """A factory without ``device=`` inside a function, meeting what came in from outside
    its body: inputs, arguments, ``self``."""
    if source_tag(clash) != NO_DEVICE or event.function is None:
        return False
    partner = clash.second.value.origin
    return partner is None or not inside(facts, partner.node, event.function.body)


class TensorCreatedWithoutDevice(ClashRule):
    """## What it does
    Finds `torch.zeros/ones/empty/full/arange/randn/rand/randint/eye/linspace/tensor(...)`
    called without `device=` inside a function or method (a module's `forward`,
    an `init_hidden`, a helper called from them, a function whose tensor
    arguments live on a device) whose result meets a tensor on another device.

    ## Why is this bad?
    Factories create on the CPU unless told otherwise. Inside `forward` the
    inputs live wherever the model was moved, so a hidden state, an attention
    mask, positional indices, reparameterisation noise, a one-hot target or an
    identity matrix built without `device=` fails with `RuntimeError: Expected
    all tensors to be on the same device` as soon as the model runs on a GPU.
    Inside an `nn.Module`, the inputs of `forward` are taken to live on the
    module's device, so the bug is found even when no caller is visible. Any
    other parameter that the function's code shows to be a tensor (a `Tensor`
    annotation, `x.device`, tensor-only methods such as `x.size(1)` or
    `x.unsqueeze(0)`, the input of a torch op) lives on a device its caller
    chooses: a warning "fails when `x` is on a GPU", given only in files that
    place tensors somewhere and for parameters that no caller in the file fills
    with a known value. Both assumptions rest on a caller: in a function that
    needs no argument and that nothing in the project calls (a model's
    never-called `test()` self-check on a sample it makes; a name the project's
    code never mentions, outside comments and strings, and that no `__all__`
    exports), they hold only after its own code reads or chooses a device.

    Not reported: CPU 0-dim constants in elementwise ops (PyTorch accepts
    them), `device=x.device`, `x.new_*`, `*_like`, results only used on the CPU.

    ## Fix safety
    The fix passes `device=<partner>.device` to the factory, where the partner
    is the tensor it meets (for a module call, an input on the module's device),
    when that is a variable already set where the factory runs. Safe for
    deterministic factories when the partner is known to be a tensor; unsafe for
    random ones (`randn`, `rand`, …), whose numbers then come from the device's
    generator, and when the partner comes from a parameter that is neither
    annotated as a tensor nor read as one (`x.device`) in the function: a
    parameter `torch.pow(width_mult, e)` reads may be a Python number, which has
    no `.device`. No fix for the legacy typed
    constructors (`torch.LongTensor(...)`, `torch.Tensor(...)` …), which raise
    given any device but the CPU.

    ## References
    - [Creation ops](https://pytorch.org/docs/stable/torch.html#creation-ops)
    - [Tensor.new_zeros](https://pytorch.org/docs/stable/generated/torch.Tensor.new_zeros.html)
    """

    meta = RuleMeta(
        code="DVL103",
        name="tensor-created-without-device",
        summary="a tensor created without device= inside a function meets a tensor on a device",
        severity=Severity.ERROR,
        fixable=True,
        runtime=RuntimeExpectation(
            exception="RuntimeError", message="Expected all tensors to be on the same device"
        ),
    )

    owns = (claims,)
    advice = ADVICE

    def finding(self, facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> Finding:
        found = super().finding(facts, event, clash)
        return replace(found, fix=partial(_fix, facts, event, clash))


def _fix(facts: Facts, event: Event, clash: Clash) -> Fix | None:
    """``torch.zeros(n)`` → ``torch.zeros(n, device=x.device)``."""
    origin = clash.first.value.origin
    factory = origin.node if origin is not None else None
    if not isinstance(factory, cst.Call) or is_legacy_constructor(facts, factory):
        return None  # a legacy constructor raises given any device but the cpu
    partner = _partner(facts, event, clash, factory)
    if partner is None:
        return None
    name, value = partner
    combined, factories = _made_together(facts, factory, clash.first.value)
    moved = {old: with_keyword(old, "device", f"{name}.device") for old in factories}
    if any(new is None for new in moved.values()):
        return None
    created = combined.visit(_Replace(moved))
    safe = _known_tensor(facts, value) and not any(
        last_name(old.func) in RANDOM_FACTORIES for old in factories
    )
    title = f"Create it on `{name}.device`"
    return Fix(combined, facts.module.code_for_node(created), title, safe)


def _made_together(
    facts: Facts, factory: cst.Call, made: Value
) -> tuple[cst.BaseExpression, list[cst.Call]]:
    """The expression to rewrite and the factories in it that need ``device=``.

    ``torch.stack((torch.arange(4), torch.arange(4)))`` takes its device from its first
    input, but each input is made on the CPU: giving only the first a device moves the
    clash into the stack (its inputs must share a device). So when the factory is an
    input of a call that combines it with other factories made on the same device, the
    whole call is rewritten, every such factory created on the partner's device.
    """
    call = _combining_call(facts, factory)
    if call is None:
        return factory, [factory]
    inputs = [
        node
        for node in _inputs_of(call)
        if isinstance(node, cst.Call)
        and not is_legacy_constructor(facts, node)
        and (value := facts.value_of(node)) is not None
        and value.origin is not None
        and value.origin.node is node
        and value.device == made.device
    ]
    return (call, inputs) if len(inputs) > 1 else (factory, [factory])


def _combining_call(facts: Facts, factory: cst.Call) -> cst.Call | None:
    """The call that takes ``factory`` as an input, directly or in a tuple or list."""
    for node in ancestors(facts, factory):
        if isinstance(node, cst.Call):
            return node
        if not isinstance(node, cst.Arg | cst.Element | cst.Tuple | cst.List):
            return None
    return None


def _inputs_of(call: cst.Call) -> Iterator[cst.BaseExpression]:
    for arg in call.args:
        if isinstance(arg.value, cst.Tuple | cst.List):
            yield from (element.value for element in arg.value.elements)
        else:
            yield arg.value


class _Replace(cst.CSTTransformer):
    """Replaces given calls (by identity) with their rewritten versions."""

    def __init__(self, replacements: dict[cst.Call, cst.Call | None]) -> None:
        super().__init__()
        self.replacements = replacements

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        return self.replacements.get(original_node) or updated_node


def _partner(
    facts: Facts, event: Event, clash: Clash, factory: cst.Call
) -> tuple[str, Value] | None:
    """A tensor variable on the partner's device that is set where the factory runs."""
    device = clash.second.value.device
    for node, value in _candidates(facts, event, clash, factory):
        if value is None or value.kind is not Kind.TENSOR or value.device != device:
            continue
        name = dotted_name(node)
        if name is not None and is_bound_at(facts, name.split(".", 1)[0], factory):
            return name, value
    return None


def _known_tensor(facts: Facts, value: Value) -> bool:
    """Whether the code shows ``value`` to be a tensor, so that ``.device`` can be read of it.

    A value that comes from a parameter was taken for a tensor because of how the code
    uses it, and ``torch.pow(width_mult, exps)`` takes a float as well: writing
    ``width_mult.device`` would break working code. Such a value is known to be a tensor
    only when its parameter is annotated as one, or when the function already reads the
    parameter's ``.device`` (it would fail on a number already).
    """
    param = value.origin.node if value.origin is not None else None
    if not isinstance(param, cst.Param):
        return True  # made by torch: a factory, an operation, a module, a loader
    if param.annotation is not None:
        written = dotted_name(param.annotation.annotation) or ""
        return written.rsplit(".", 1)[-1].endswith("Tensor")
    function = next((n for n in ancestors(facts, param) if isinstance(n, cst.FunctionDef)), None)
    name = param.name.value
    return function is not None and any(
        isinstance(node, cst.Attribute)
        and node.attr.value == "device"
        and isinstance(node.value, cst.Name)
        and node.value.value == name
        for node in expression_nodes(function.body)
    )


def _candidates(
    facts: Facts, event: Event, clash: Clash, factory: cst.Call
) -> Iterator[tuple[cst.CSTNode, Value | None]]:
    """Tensors whose device the factory could take, most natural first: one its
    arguments read (``torch.randn(std.size())``), the partner itself, the other
    inputs of a module call, any tensor variable of the enclosing function."""
    for node in _names_in(factory.args):
        yield node, facts.value_of(node)
    yield clash.second.node, clash.second.value
    if isinstance(event, ModuleCall):
        for operand in event.inputs:
            yield operand.node, operand.value
    function = next((n for n in ancestors(facts, factory) if isinstance(n, cst.FunctionDef)), None)
    if function is None:
        return
    for node, value in facts.values.items():
        if isinstance(node, cst.Name) and function in ancestors(facts, node):
            yield node, value


def _names_in(args: Sequence[cst.Arg]) -> Iterator[cst.BaseExpression]:
    stack: list[cst.CSTNode] = list(reversed(args))
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name | cst.Attribute):
            yield node
        stack.extend(reversed(node.children))
