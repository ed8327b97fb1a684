"""What torch does to devices, as plain functions over abstract values.

No environment, no events, no state: given the values a call receives, these
say what it returns (a factory's tensor, an op's result, a module's output,
what iterating a DataLoader yields). ``Calls`` decides which one applies to a
call, records the events, and keeps what the file does as a whole.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from devlint.core import torch_api, torch_facts
from devlint.core.events import Facts, Operand
from devlint.core.lattice import CPU, Concrete, Device, is_known
from devlint.core.scopes import Args
from devlint.core.syntax import last_name, string_value
from devlint.core.torch_api import CallKind, CallSpec
from devlint.core.values import (
    ASYNC_COPY,
    CALL_RESULT,
    LOADER_BATCH,
    NO_DEVICE,
    SCALAR_VALUE,
    UNKNOWN_VALUE,
    USED_AS_MODULE,
    Kind,
    Origin,
    Value,
    batch_part,
    combined_ndim,
    element_of,
    has_dimension,
    is_tensor_like,
    join_all,
    join_values,
    result_base,
)

# -- tensors ---------------------------------------------------------------------------


def creation_origin(node: cst.Call, args: Args) -> Origin:
    """Origin of a new tensor; names the device expression when one is given."""
    given = args.keywords.get("device")
    if given is None:
        return Origin("created without `device=`", node, tag=NO_DEVICE)
    if isinstance(given[0], cst.SimpleString):
        return Origin("created", node)
    return Origin("created on {}", node, given[0])


def takes_device(spec: CallSpec, args: Args) -> bool:
    """Whether a ``device=`` argument decides where the result of this call lives: a
    factory (unless it writes into an ``out=`` tensor), or a ``*_like`` op."""
    if spec.kind is CallKind.LIKE:
        return True
    out = args.keywords.get("out")
    return spec.kind is CallKind.FACTORY and not (out is not None and is_tensor_like(out[1]))


def spec_result(
    spec: CallSpec,
    name: str,
    node: cst.Call,
    args: Args,
    operands: list[Operand],
    device: Device | None,
) -> Value:
    """What a torch function or tensor method described by the API table returns, given
    its tensor operands and the device its ``device=`` argument names (None: not given)."""
    kind = spec.kind
    if kind is CallKind.FACTORY:
        out = args.keywords.get("out")
        if out is not None and is_tensor_like(out[1]):  # written into `out`, on its device
            return out[1]
        return Value(
            Kind.TENSOR, device or CPU, creation_origin(node, args), _factory_ndim(spec, name, args)
        )
    if kind is CallKind.NON_TENSOR:
        return SCALAR_VALUE
    if kind is CallKind.LIKE:
        base = operands[0].value if operands else UNKNOWN_VALUE
        if device is not None:
            return Value(Kind.TENSOR, device, creation_origin(node, args), base.ndim)
        return Value(Kind.TENSOR, base.device, base.origin, base.ndim)
    base = result_base([op.value for op in operands])
    if base is None:
        base = operands[0].value if operands else UNKNOWN_VALUE
    elif base.device == CPU and not has_dimension(base) and _unknown_argument(args):
        base = UNKNOWN_VALUE  # a cpu 0-dim operand takes the device of an unseen one
    if spec.reduces and not _has_dim_argument(args):
        ndim = 0
    elif name in torch_facts.ADDS_A_DIMENSION:
        ndim = 1
    elif kind is CallKind.COMBINE:
        ndim = None if spec.strict else combined_ndim([op.value for op in operands])
    else:
        ndim = base.ndim if name not in ("squeeze", "item", "select") else None
    if name == "meshgrid":  # one grid per input, each with every input's dimension
        grid = Value(Kind.TENSOR, base.device, base.origin, 1)
        return Value(Kind.SEQUENCE, element=grid)
    return Value(Kind.TENSOR, base.device, base.origin, ndim)


COMPARISONS = {
    name: (
        CallSpec(CallKind.COMBINE, ("input", "other")),  # torch.allclose(a, b)
        CallSpec(CallKind.COMBINE, ("other",)),  # a.allclose(b)
    )
    for name in torch_facts.COMPARISONS_TO_A_BOOL
}
"""The specs of the comparisons that return a Python bool: ops that combine their tensors."""


def gradients(args: Args) -> Value:
    """``torch.autograd.grad(outputs, inputs)``: a tuple with one gradient per input, each on
    its input's device and of its shape."""
    given = args.get(1, "inputs")
    if given is None:
        return UNKNOWN_VALUE
    inputs = given[1]
    if is_tensor_like(inputs):
        gradient = Value(Kind.TENSOR, inputs.device, inputs.origin, inputs.ndim)
        return Value(Kind.SEQUENCE, items=(gradient,), element=gradient)
    if inputs.kind is Kind.SEQUENCE and inputs.items is not None:
        items = tuple(
            Value(Kind.TENSOR, item.device, item.origin, item.ndim)
            if is_tensor_like(item)
            else UNKNOWN_VALUE
            for item in inputs.items
        )
        return Value(Kind.SEQUENCE, items=items)
    return UNKNOWN_VALUE


def tensor_operands(
    spec: CallSpec, args: Args, receiver: tuple[cst.BaseExpression, Value] | None
) -> list[Operand]:
    """Tensors an op receives: the receiver, tensor arguments, members of a tensor list.

    Every tensor-valued positional argument counts (``einsum(eq, a, b)``), and
    keywords count when the table names them as tensor parameters.
    """
    found = [Operand(*receiver)] if receiver is not None else []
    leading = True  # while every argument so far is a tensor, position i is tensor_params[i]
    for position, given in enumerate(args.positional):
        if is_tensor_like(given[1]):
            named = leading and position < len(spec.tensor_params)
            found.append(Operand(*given, spec.tensor_params[position] if named else None))
        else:
            leading = False
            if given[1].kind is Kind.SEQUENCE and spec.sequence_param is not None:
                found.extend(sequence_members(given))
    for name, given in args.keywords.items():
        if name == spec.sequence_param:
            found.extend(sequence_members(given))
        elif name in spec.tensor_params and is_tensor_like(given[1]):
            found.append(Operand(*given, name))
    return found


def sequence_members(given: tuple[cst.BaseExpression, Value]) -> list[Operand]:
    """The tensors in a list or tuple argument (``torch.cat([a, b])``, an LSTM's state)."""
    node, value = given
    if value.items is not None and isinstance(node, (cst.List, cst.Tuple)):
        return [
            Operand(element.value, item)
            for element, item in zip(node.elements, value.items, strict=False)
            if is_tensor_like(item)
        ]
    element = element_of(value)
    return [Operand(node, element)] if is_tensor_like(element) else []


def tensor_from_data(qualname: str, node: cst.Call, args: Args, device: Device | None) -> Value:
    """``torch.tensor(data)``, ``torch.as_tensor``, ``torch.from_numpy``, a legacy
    constructor; ``device`` is what ``device=`` names (None: not given)."""
    data = args.get(0, "data")
    ndim = _literal_ndim(data[0]) if data else None
    if data and ndim is None and data[1].kind is Kind.SEQUENCE:
        ndim = 1
    as_tensor = qualname in ("torch.as_tensor", "torch.asarray")
    if as_tensor and data and device is None and is_tensor_like(data[1]):
        return data[1]
    if qualname == "torch.Tensor" and len(args.positional) == 1 and data[1].kind is Kind.TENSOR:
        return data[1]  # `torch.Tensor(t)` of a tensor: an alias of it, on its device
    if qualname == "torch.tensor" and data and device is None and is_tensor_like(data[1]):
        # a copy of a tensor, on its device ("If None and data is a tensor then the device
        # of data is used"), with its dimensions
        copied = data[1]
        return Value(Kind.TENSOR, copied.device, copied.origin, copied.ndim)
    if qualname == "torch.from_numpy" or (qualname in torch_facts.LEGACY_CONSTRUCTORS and data):
        ndim = 1  # `torch.FloatTensor(x)` rejects a number: only a 0-d array gives 0-dim
    origin = (
        Origin("created", node) if qualname == "torch.from_numpy" else creation_origin(node, args)
    )
    return Value(Kind.TENSOR, device or CPU, origin, ndim)


def type_conversion(node: cst.Call, receiver: Value, args: Args) -> Value | None:
    """``x.type(torch.LongTensor)``: a typed tensor class names a device too, so the result
    is a copy on the cpu (``torch.cuda.LongTensor``: on the GPU) wherever ``x`` was."""
    given = args.get(0, "dtype")
    if given is None:
        return None
    named = given[1].ref if given[1].kind is Kind.NAMESPACE else string_value(given[0])
    if not isinstance(named, str) or named == "torch.Tensor":
        return None
    if named in torch_facts.LEGACY_CONSTRUCTORS:
        device: Device = CPU
    elif (
        named.startswith("torch.cuda.")
        and named.replace(".cuda", "", 1) in torch_facts.LEGACY_CONSTRUCTORS
    ):
        device = Concrete("cuda")
    else:
        return None
    origin = Origin(f"converted to `{named}`", node)
    return Value(Kind.TENSOR, device, origin, receiver.ndim)


def settled(value: Value) -> Value:
    """``value`` with its pending host copies (and those of a list's elements) complete."""
    origin = value.origin
    if origin is not None and origin.tag == ASYNC_COPY:
        return value.with_device(value.device, Origin(origin.verb, origin.node, origin.subject))
    if value.kind is Kind.SEQUENCE and value.element is not None:
        element = settled(value.element)
        return value if element is value.element else replace(value, element=element)
    return value


def is_legacy_constructor(facts: Facts, call: cst.Call) -> bool:
    """Whether ``call`` is ``torch.LongTensor(...)`` or another legacy constructor, under
    whatever name it was imported."""
    callee = facts.value_of(call.func)
    return (
        callee is not None
        and callee.kind is Kind.NAMESPACE
        and callee.ref in torch_facts.LEGACY_CONSTRUCTORS
    )


# -- modules -----------------------------------------------------------------------------


def module_container(node: cst.Call, args: Args) -> Value:
    """``nn.Sequential(...)``, ``nn.ModuleList([...])``: stateful when a member is."""
    members = [value for _, value in args.all()]
    for member in members:
        if member.kind is Kind.SEQUENCE or member.kind is Kind.MAPPING:
            members.extend(member.items or ())
    states = {member.stateful for member in members if member.kind is Kind.MODULE}
    unknown = any(member.kind is Kind.UNKNOWN for member in members)
    stateful = True if True in states else (None if unknown or None in states else False)
    qualname = "torch.nn." + (last_name(node.func) or "")
    ref = qualname if qualname in torch_facts.MODULE_CONTAINERS else None
    return Value(Kind.MODULE, CPU, Origin("created", node), stateful=stateful, ref=ref)


def module_inputs(
    module: Value, args: Args, forward_inputs: list[tuple[cst.BaseExpression, Value]] | None
) -> list[Operand]:
    """The tensors a module call receives, as arguments, in lists or unpacked;
    ``forward_inputs``: the arguments a visible ``forward`` takes as inputs, if known."""
    inputs: list[Operand] = []
    given_inputs = args.all() if forward_inputs is None else forward_inputs
    if module.ref == USED_AS_MODULE:  # of a model we cannot see, only the first input is
        given_inputs = given_inputs[:1]  # surely data: others may be lengths, boxes, indices
    for given in given_inputs:
        if is_tensor_like(given[1]):
            inputs.append(Operand(*given))
        elif given[1].kind is Kind.SEQUENCE:  # an LSTM's (h0, c0)
            inputs.extend(sequence_members(given))
    for star, node_given, value in args.unpacked:  # `model(**batch)`, `model(*inputs)`
        members = _mapping_members(value) if star == "**" else [element_of(value)]
        inputs.extend(Operand(node_given, member) for member in members if is_tensor_like(member))
    return inputs


def module_output(module: Value, inputs: list[Operand]) -> Value:
    """What a layer, model or loss returns: it lives where the module computes."""
    is_loss = isinstance(module.ref, str) and torch_api.is_loss(module.ref)
    if module.stateful is False or is_loss:
        known = [op.value for op in inputs if is_known(op.value.device)]
        base = known[0] if known else UNKNOWN_VALUE
        return Value(Kind.TENSOR, base.device, base.origin, 0 if is_loss else None)
    if module.stateful is None or not is_known(module.device):
        return Value(Kind.UNKNOWN, ref=CALL_RESULT)
    return Value(Kind.TENSOR, module.device, module.origin, 1)


def returns_the_module(name: str) -> bool:
    """``nn.Module``'s own methods that return the module itself (``train``, ``eval``...)."""
    return name in torch_facts.RETURNS_THE_MODULE


def module_method(module: Value, name: str) -> Value:
    """What ``model.<name>()`` returns for nn.Module's own methods (not ``forward``)."""
    if name in torch_facts.RETURNS_THE_MODULE:
        return module
    if name in torch_facts.MODULE_TENSORS:
        return Value(Kind.ITERABLE, element=Value(Kind.TENSOR, module.device, module.origin))
    if name in torch_facts.NAMED_MODULE_TENSORS:
        pair = Value(
            Kind.SEQUENCE,
            items=(Value(Kind.STRING), Value(Kind.TENSOR, module.device, module.origin)),
        )
        return Value(Kind.ITERABLE, element=pair)
    return Value(Kind.UNKNOWN, ref=CALL_RESULT)


# -- containers, builtins and iteration ---------------------------------------------------


def container_method(container: Value, name: str) -> Value:
    """``items()``/``values()``/``get()`` of a batch or dict: what it holds."""
    part = (
        batch_part(container)
        if container.kind in (Kind.BATCH, Kind.TENSOR)
        else (
            container.element or (join_all(container.items) if container.items else UNKNOWN_VALUE)
        )
    )
    if name == "items":
        pair = Value(Kind.SEQUENCE, items=(Value(Kind.STRING), part))
        return Value(Kind.ITERABLE, element=pair)
    if name == "keys":
        return Value(Kind.ITERABLE, element=Value(Kind.STRING))
    if name == "values":
        return Value(Kind.ITERABLE, element=part)
    return part


def builtin_result(name: str, args: Args) -> Value:
    """What a Python builtin returns: ``zip``, ``enumerate`` and ``list`` keep devices."""
    values = [value for _, value in args.positional]
    first = args.positional[0] if args.positional else None
    if name in ("iter", "reversed", "sorted") or name in torch_facts.PASS_THROUGH:
        return values[0] if values else UNKNOWN_VALUE
    if name == "next":
        return iterate(values[0], first[0]) if first else UNKNOWN_VALUE
    if name == "enumerate" and first is not None:
        element = iterate(values[0], first[0])
        return Value(Kind.ITERABLE, element=Value(Kind.SEQUENCE, items=(SCALAR_VALUE, element)))
    if name == "zip" and not args.starred:
        items = tuple(iterate(value, expr) for expr, value in args.positional)
        return Value(Kind.ITERABLE, element=Value(Kind.SEQUENCE, items=items))
    if name in ("list", "tuple") and not args.positional and not args.starred:
        return Value(Kind.SEQUENCE, items=())  # `list()`: empty, as `[]` is
    if name in ("list", "tuple") and first is not None:
        if values[0].kind is Kind.SEQUENCE:
            return values[0]
        return Value(Kind.SEQUENCE, element=iterate(values[0], first[0]))
    if name == "sum" and first is not None and not args.starred:
        return _sum_of(iterate(values[0], first[0]), values[1] if len(values) > 1 else None)
    if name == "range":
        return Value(Kind.ITERABLE, element=SCALAR_VALUE)
    if name in ("len", "isinstance", "float", "int", "bool", "round", "hasattr"):
        return SCALAR_VALUE
    if name == "str" or name == "repr":
        return Value(Kind.STRING)
    if name == "dict" and not args.positional and not args.starred:  # dict(wte=..., h=...)
        keys = tuple(args.keywords)
        return Value(Kind.MAPPING, keys=keys, items=tuple(v for _, v in args.keywords.values()))
    return Value(Kind.UNKNOWN, ref=CALL_RESULT)


def _sum_of(element: Value, start: Value | None) -> Value:
    """``sum(losses)``: a tensor where the tensors summed are (its start, 0 by default, is a
    Python number; a tensor start joins them)."""
    if element.kind is not Kind.TENSOR:
        return Value(Kind.UNKNOWN, ref=CALL_RESULT)
    total = element if start is None or start.kind is Kind.SCALAR else join_values(element, start)
    return Value(Kind.TENSOR, total.device, total.origin, total.ndim)


def iterate(iterable: Value, node: cst.BaseExpression) -> Value:
    """What a ``for`` over ``iterable`` binds; iterating a DataLoader yields a batch."""
    if iterable.kind is Kind.LOADER:
        origin = Origin("batch from {}", node, node, LOADER_BATCH)
        return Value(Kind.BATCH, iterable.device, origin)
    return element_of(iterable)


def _literal_ndim(node: cst.BaseExpression) -> int | None:
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
        return 0
    if isinstance(node, cst.UnaryOperation) and isinstance(
        node.expression, (cst.Integer, cst.Float)
    ):
        return 0
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return 0
    if isinstance(node, (cst.List, cst.Tuple)):
        return 1
    return None


def _factory_ndim(spec: CallSpec, name: str, args: Args) -> int | None:
    """The dimensions a factory's size gives for sure: ``torch.zeros((8, 2))`` and
    ``torch.zeros(8, 2)`` have two, ``torch.zeros(())`` none."""
    if spec.reduces:
        return 0  # torch.scalar_tensor
    if not spec.size_params:
        return 1
    sizes = [expr for expr, _ in args.positional]
    if "size" in args.keywords:
        sizes = [args.keywords["size"][0]]
    if not sizes:
        return 1 if args.starred else 0  # torch.ones(*x.size())
    first = sizes[0]
    if len(sizes) == 1 and isinstance(first, (cst.Tuple, cst.List)) and not first.elements:
        return 0
    counted = _size_length(first)
    if len(sizes) > 1 and name in torch_facts.SIZE_AS_VARARGS and not args.starred:
        counted = len(sizes)  # torch.zeros(8, 2): each argument a dimension
    return max(counted, 1)


def _size_length(size: cst.BaseExpression) -> int:
    """How many dimensions a size expression names at least: a tuple literal's entries
    (``(n, m) + shape`` at least those), else one."""
    if isinstance(size, cst.BinaryOperation) and isinstance(size.operator, cst.Add):
        return max(_size_length(size.left), _size_length(size.right))
    if isinstance(size, (cst.Tuple, cst.List)):
        return sum(isinstance(element, cst.Element) for element in size.elements)
    return 1


def _unknown_argument(args: Args) -> bool:
    """An argument the analysis cannot see (it may be a tensor on any device)."""
    return any(value.kind is Kind.UNKNOWN for _, value in args.all())


def _has_dim_argument(args: Args) -> bool:
    return bool(args.positional) or "dim" in args.keywords or "axis" in args.keywords


def _mapping_members(value: Value) -> list[Value]:
    """What ``**value`` passes: a dict's values, the tensors of a DataLoader batch."""
    if value.kind is Kind.BATCH:
        return [batch_part(value)]
    if value.kind is not Kind.MAPPING:
        return []
    if value.items is not None:
        return list(value.items)
    return [value.element] if value.element is not None else []
