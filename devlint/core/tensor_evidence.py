"""Which parameters of a function the code itself shows to be tensors.

A parameter whose caller is unknown is taken for a tensor (on a device the
caller chooses) only with evidence in the function: an annotation naming
``Tensor``, an attribute or method only tensors have (``x.device``,
``x.size(1)``, ``x.unsqueeze(0)``), or being the input of a torch operation
(``torch.matmul(x, w)``, ``F.pad(x, ...)``, a member of ``torch.cat([x, y])``).
Attributes NumPy arrays, lists, strings or modules share with tensors
(``shape``, ``sum``, ``to``, ``float``) are no evidence: Python numbers and
arrays taken for tensors are a known source of false findings. A parameter
whose items the code shows to be tensors (``for t in feats: t.size(0)``,
``a, b = pair; a.unsqueeze(0)``) is a sequence of tensors on a device the
caller chooses.

A parameter the function places itself (``lengths.cpu()``, ``x.to(self.device)``) or
hands to a torch call that reads it on the host (the ``lengths`` of
``pack_padded_sequence``) may come from its caller on any device: it is no input that
must be on a module's device.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import libcst as cst

from devlint.core import torch_api, torch_facts
from devlint.core.syntax import (
    dotted_name,
    expression_nodes,
    is_device_name,
    parse_device_string,
    string_value,
    words_in,
)
from devlint.core.torch_api import CallKind

_OPERATIONS = frozenset({CallKind.COMBINE, CallKind.INHERIT, CallKind.LIKE})

Resolver = Callable[[str], str | None]
"""Maps a dotted name as written (``F.pad``) to its qualified name (``torch.nn.functional.pad``)."""


@dataclass(frozen=True, slots=True)
class TensorParameters:
    """The parameters a function's code shows to be tensors, and to be sequences of them."""

    tensors: frozenset[str] = frozenset()
    sequences: frozenset[str] = frozenset()
    placed: frozenset[str] = frozenset()
    """Parameters the code moves to a device itself or hands to a host-side argument."""

    def without(self, names: set[str]) -> TensorParameters:
        return TensorParameters(self.tensors - names, self.sequences - names, self.placed)


def tensor_parameters(function: cst.FunctionDef, resolve: Resolver) -> TensorParameters:
    """The parameters the function's own code shows to be tensors or sequences of tensors.

    Evidence is collected for every name in one walk; a name bound to an item of
    a parameter (by ``for``, a comprehension or unpacking) makes that parameter
    a sequence of tensors. A parameter whose device the code tests
    (``x.is_cuda``, ``x.device.type``, ``x.device == ...``, also through its
    items) is left out: the function handles each device on its own branch, and
    without the test refining each branch a symbol would make the branch for
    the other device look wrong.
    """
    params = _all_params(function.params)
    names = {param.name.value for param in params} - {"self", "cls"}
    if not names:
        return TensorParameters()
    found = {param.name.value for param in params if _annotated_tensor(param)}
    tested: set[str] = set()
    placed: set[str] = set()
    items: dict[str, str] = {}  # a name bound to an item of a parameter -> the parameter
    for node in expression_nodes(function.body):
        kind = type(node)
        if kind is cst.Attribute:
            owner = _name_of(node.value)
            if owner is not None:
                attribute = node.attr.value
                if attribute in torch_facts.DEVICE_TESTS:
                    tested.add(owner)
                elif attribute in torch_facts.TENSOR_ONLY_ATTRIBUTES:
                    found.add(owner)
            device_of = _device_attribute_of(node.value)
            if device_of is not None and node.attr.value in ("type", "index"):
                tested.add(device_of)
        elif kind is cst.Comparison:
            for side in (node.left, *(target.comparator for target in node.comparisons)):
                device_of = _device_attribute_of(side)
                if device_of is not None:
                    tested.add(device_of)
        elif kind is cst.Call:
            found.update(_tensors_of_call(node, resolve))
            placed.update(_placed_by_call(node, resolve))
        elif kind is cst.For or kind is cst.CompFor:
            _note_items(node.target, node.iter, names, items)
        elif kind is cst.Assign and len(node.targets) == 1:
            target = node.targets[0].target
            if isinstance(target, cst.Tuple | cst.List):
                for element in target.elements:
                    _note_items(element.value, node.value, names, items)
    tested.update([items[name] for name in tested if name in items])
    numbers = {param.name.value for param in params if _python_number(param)}
    tensors = (found & names) - tested - numbers
    sequences = {items[name] for name in found if name in items} - tensors - tested - numbers
    return TensorParameters(frozenset(tensors), frozenset(sequences), frozenset(placed & names))


def _note_items(
    target: cst.BaseExpression, source: cst.BaseExpression, names: set[str], items: dict[str, str]
) -> None:
    """``target`` is bound to an item of ``source``: remember it when ``source`` is a parameter."""
    if isinstance(target, cst.Name) and isinstance(source, cst.Name) and source.value in names:
        items[target.value] = source.value


def _name_of(node: cst.BaseExpression) -> str | None:
    return node.value if isinstance(node, cst.Name) else None


def _device_attribute_of(node: cst.BaseExpression) -> str | None:
    """``x`` for ``x.device``."""
    if isinstance(node, cst.Attribute) and node.attr.value == "device":
        return _name_of(node.value)
    return None


def _tensors_of_call(call: cst.Call, resolve: Resolver) -> Iterator[str]:
    func = call.func
    if isinstance(func, cst.Attribute):
        owner = _name_of(func.value)
        if owner is not None and func.attr.value in torch_facts.TENSOR_ONLY_METHODS:
            yield owner
    if not call.args or call.args[0].keyword is not None or call.args[0].star:
        return
    first = call.args[0].value
    if not isinstance(first, cst.Name | cst.List | cst.Tuple):
        return
    written = dotted_name(func)
    qualname = resolve(written) if written is not None else None
    spec = torch_api.torch_function(qualname) if qualname is not None else None
    if spec is None or spec.kind not in _OPERATIONS or not spec.tensor_params:
        return
    if isinstance(first, cst.Name):
        yield first.value
    elif spec.sequence_param:  # `torch.cat([state, action], 1)`: each one a tensor
        yield from (e.value.value for e in first.elements if isinstance(e.value, cst.Name))


def _placed_by_call(call: cst.Call, resolve: Resolver) -> Iterator[str]:
    """The names a call moves to a device (``x.cpu()``, ``x.to(device)``; not
    ``x.to(torch.float16)``) or hands to a host-side argument."""
    func = call.func
    if isinstance(func, cst.Attribute):
        owner = _name_of(func.value)
        method = func.attr.value
        named = method in torch_api.device_named_moves()
        if owner is not None and (named or (method == "to" and _names_a_device(call))):
            yield owner
    written = dotted_name(func)
    qualname = resolve(written) if written is not None else None
    host = torch_facts.HOST_ARGUMENTS.get(qualname or "")
    if host is not None:
        position, keyword = host
        for index, arg in enumerate(call.args):
            if arg.star:
                return
            keyword_given = arg.keyword.value if arg.keyword is not None else None
            if keyword_given == keyword or (keyword_given is None and index == position):
                name = _name_of(arg.value)
                if name is not None:
                    yield name


def _names_a_device(call: cst.Call) -> bool:
    """``.to(device)``, ``.to(self.device)``, ``.to("cuda")``, ``.to(device=...)``: a move,
    not a conversion (``.to(torch.float16)``) or a copy of another tensor's options."""
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == "device":
                return True
            continue
        value = arg.value
        if isinstance(value, cst.SimpleString):
            text = string_value(value)
            return text is not None and parse_device_string(text) is not None
        written = dotted_name(value)
        if written is not None:
            return is_device_name(written, frozenset())
        if isinstance(value, cst.Call):
            return dotted_name(value.func) in ("torch.device", "device")
        return False
    return False


def _python_number(param: cst.Param) -> bool:
    """A parameter annotated as a number or string (``base: int``), or whose default is one
    (``theta=10000``), also where its annotation admits a tensor too (``init_values:
    Union[float, Tensor] = 1e-2``): ``torch.pow(base, exps)`` takes it as a Python scalar,
    no tensor."""
    default = param.default
    if isinstance(default, cst.UnaryOperation):
        default = default.expression
    number = isinstance(default, cst.Integer | cst.Float | cst.Imaginary | cst.SimpleString) or (
        isinstance(default, cst.Name) and default.value in ("True", "False")
    )
    if param.annotation is None:
        return number
    annotation = param.annotation.annotation
    if isinstance(annotation, cst.Name):
        return annotation.value in _SCALAR_TYPES
    return number and any(word in _SCALAR_TYPES for word, _ in words_in(annotation))


_SCALAR_TYPES = frozenset({"int", "float", "bool", "str", "complex"})


def _annotated_tensor(param: cst.Param) -> bool:
    annotation = param.annotation
    if annotation is None:
        return False
    return any(word.strip("'\"").endswith("Tensor") for word, _ in words_in(annotation.annotation))


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    return [*params.posonly_params, *params.params, *params.kwonly_params]
