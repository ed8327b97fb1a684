"""Which parameters of a function the code itself shows to be tensors.

A parameter whose caller is unknown is taken for a tensor (on a device the
caller chooses) only with evidence in the function: an annotation naming
``Tensor``, an attribute or method only tensors have (``x.device``,
``x.size(1)``, ``x.unsqueeze(0)``), or being the input of a torch operation
(``torch.matmul(x, w)``, ``F.pad(x, ...)``). Attributes NumPy arrays, lists,
strings or modules share with tensors (``shape``, ``sum``, ``to``, ``float``)
are no evidence: Python numbers and arrays taken for tensors are a known source
of false findings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

from devlint.core import torch_api
from devlint.core.syntax import dotted_name, expression_nodes, words_in
from devlint.core.torch_api import CallKind

TENSOR_ATTRIBUTES = frozenset({"device", "grad_fn", "requires_grad"})
DEVICE_TESTS = frozenset({"is_cuda", "is_cpu", "get_device"})
TENSOR_METHODS = frozenset(
    {
        "size", "dim", "numel", "unsqueeze", "view", "view_as", "contiguous", "permute",
        "expand", "expand_as", "type_as", "detach", "masked_fill", "masked_fill_",
        "masked_select", "masked_scatter", "new_zeros", "new_ones", "new_full", "new_empty",
        "new_tensor", "narrow", "unbind", "index_select", "index_fill", "index_add",
        "index_copy", "gather", "scatter", "scatter_", "scatter_add", "scatter_add_",
        "bmm", "softmax", "log_softmax", "sigmoid", "relu", "exp", "log", "sqrt", "norm",
        "clamp", "clamp_", "clamp_min", "clamp_max", "long", "int", "bool", "unfold", "flip",
        "roll", "topk", "logical_not", "is_contiguous",
        "element_size", "fill_", "zero_", "add_", "mul_", "sub_", "div_", "chunk",
        "split_with_sizes", "matmul", "mm", "neg", "rsqrt", "is_floating_point",
    }
)  # fmt: skip
"""Methods of torch.Tensor that NumPy arrays, Python containers, strings and
nn.Modules do not have (or not with a tensor's signature)."""
_OPERATIONS = frozenset({CallKind.COMBINE, CallKind.INHERIT, CallKind.LIKE})

Resolver = Callable[[str], str | None]
"""Maps a dotted name as written (``F.pad``) to its qualified name (``torch.nn.functional.pad``)."""


def tensor_parameters(function: cst.FunctionDef, resolve: Resolver) -> frozenset[str]:
    """Names of the parameters the function's own code shows to be tensors.

    A parameter whose device the code tests (``x.is_cuda``, ``x.device.type``,
    ``x.device == ...``) is left out: the function handles each device on its
    own branch, and without the test refining each branch a symbol would make
    the branch for the other device look wrong.
    """
    params = _all_params(function.params)
    names = {param.name.value for param in params} - {"self", "cls"}
    if not names:
        return frozenset()
    found = {param.name.value for param in params if _annotated_tensor(param)}
    tested: set[str] = set()
    for node in expression_nodes(function.body):
        kind = type(node)
        if kind is cst.Attribute:
            owner = _parameter_of(node.value, names)
            if owner is not None:
                attribute = node.attr.value
                if attribute in DEVICE_TESTS:
                    tested.add(owner)
                elif attribute in TENSOR_ATTRIBUTES:
                    found.add(owner)
            device_of = _device_attribute_of(node.value, names)
            if device_of is not None and node.attr.value in ("type", "index"):
                tested.add(device_of)
        elif kind is cst.Comparison:
            for side in (node.left, *(target.comparator for target in node.comparisons)):
                device_of = _device_attribute_of(side, names)
                if device_of is not None:
                    tested.add(device_of)
        elif kind is cst.Call:
            found.update(_tensors_of_call(node, names, resolve))
    return frozenset(found - tested)


def _parameter_of(node: cst.BaseExpression, names: set[str]) -> str | None:
    return node.value if isinstance(node, cst.Name) and node.value in names else None


def _device_attribute_of(node: cst.BaseExpression, names: set[str]) -> str | None:
    """``x`` for ``x.device`` where ``x`` is a parameter."""
    if isinstance(node, cst.Attribute) and node.attr.value == "device":
        return _parameter_of(node.value, names)
    return None


def _tensors_of_call(call: cst.Call, names: set[str], resolve: Resolver) -> Iterator[str]:
    func = call.func
    if isinstance(func, cst.Attribute):
        owner = _parameter_of(func.value, names)
        if owner is not None and func.attr.value in TENSOR_METHODS:
            yield owner
    if not call.args or call.args[0].keyword is not None or call.args[0].star:
        return
    first = call.args[0].value
    if not (isinstance(first, cst.Name) and first.value in names):
        return
    written = dotted_name(func)
    qualname = resolve(written) if written is not None else None
    spec = torch_api.torch_function(qualname) if qualname is not None else None
    if spec is not None and spec.kind in _OPERATIONS and spec.tensor_params:
        yield first.value


def _annotated_tensor(param: cst.Param) -> bool:
    annotation = param.annotation
    if annotation is None:
        return False
    return any(word.strip("'\"").endswith("Tensor") for word, _ in words_in(annotation.annotation))


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    return [*params.posonly_params, *params.params, *params.kwonly_params]
