"""Device parameters a call to a local function leaves at their default.

``def get_batch(keys, device="cuda")`` called as ``get_batch(keys)`` by code
that holds its own run-time ``device`` places the batch on the hard-coded
default while everything else follows ``device``: it fails on a CPU-only
machine and misplaces the batch on any other device. Only parameters the
callee reads count (an unused default places nothing), and a call that
unpacks ``*args``/``**kwargs`` may pass anything.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devlint.core.scopes import Args, FunctionInfo
from devlint.core.syntax import expression_nodes, is_device_name


def unpassed_device_parameters(
    info: FunctionInfo, args: Args, bound: bool, device_names: frozenset[str]
) -> Iterator[cst.Param]:
    """The callee's defaulted device parameters that this call does not pass.

    ``bound``: the call goes through an instance (``self._load_model()``), whose
    first parameter is the receiver, not an argument.
    """
    if args.starred:
        return
    params = info.node.params
    positional = [*params.posonly_params, *params.params][1 if bound else 0 :]
    unpassed = [
        param
        for index, param in enumerate([*positional, *params.kwonly_params])
        if param.default is not None
        and is_device_name(param.name.value, device_names)
        and not (index < len(positional) and index < len(args.positional))
        and param.name.value not in args.keywords
    ]
    if unpassed:  # rare: walk the callee's body only then
        read = _names_read(info.node)
        yield from (param for param in unpassed if param.name.value in read)


def _names_read(function: cst.FunctionDef) -> set[str]:
    return {node.value for node in expression_nodes(function.body) if type(node) is cst.Name}
