"""``torch.distributed``: which calls are collectives, and which backends a file asks for.

A collective runs on the backend its process group has for the tensors'
device. ``init_process_group("nccl")`` gives a group with NCCL only, which
has no CPU backend; a group asked for without a backend (PyTorch 2 pairs
gloo with NCCL) or with gloo can reduce CPU tensors too.
"""

from __future__ import annotations

import libcst as cst

from devlint.core.events import Collective, Operand, ProcessGroupCreated
from devlint.core.scopes import Args
from devlint.core.syntax import string_value
from devlint.core.values import is_tensor_like

_PREFIXES = ("torch.distributed.", "torch.distributed.distributed_c10d.")

# collective -> the parameters that take a tensor (position, keyword), and where ``group`` is
_COLLECTIVES: dict[str, tuple[tuple[tuple[int, str], ...], tuple[int, str]]] = {
    "all_reduce": (((0, "tensor"),), (2, "group")),
    "broadcast": (((0, "tensor"),), (2, "group")),
    "reduce": (((0, "tensor"),), (3, "group")),
    "all_gather": (((1, "tensor"),), (2, "group")),
    "all_gather_into_tensor": (((0, "output_tensor"), (1, "input_tensor")), (2, "group")),
    "reduce_scatter_tensor": (((0, "output"), (1, "input")), (3, "group")),
    "gather": (((0, "tensor"),), (3, "group")),
    "scatter": (((0, "tensor"),), (3, "group")),
    "send": (((0, "tensor"),), (2, "group")),
    "recv": (((0, "tensor"),), (2, "group")),
    "isend": (((0, "tensor"),), (2, "group")),
    "irecv": (((0, "tensor"),), (2, "group")),
}
_GROUP_MAKERS = {"init_process_group": 0, "new_group": 2}  # name -> position of ``backend``


def distributed_event(qualname: str, node: cst.Call, args: Args) -> object | None:
    """The event a ``torch.distributed`` call gives rules, if it is a collective or a group."""
    name = _distributed_name(qualname)
    if name is None:
        return None
    if name in _GROUP_MAKERS:
        given = args.get(_GROUP_MAKERS[name], "backend")
        backend = string_value(given[0]) if given is not None else None
        return ProcessGroupCreated(node, given is not None, backend)
    if name not in _COLLECTIVES:
        return None
    tensor_parameters, (group_position, group_keyword) = _COLLECTIVES[name]
    tensors = []
    for position, keyword in tensor_parameters:
        given = args.get(position, keyword)
        if given is not None and is_tensor_like(given[1]):
            tensors.append(Operand(*given))
    group = args.get(group_position, group_keyword) is not None
    return Collective(node, name, tuple(tensors), group)


def launcher_backend(node: cst.Call, args: Args) -> ProcessGroupCreated | None:
    """A call outside torch that names the backend its processes' group gets
    (``dispatch.run(client, train, backend="gloo")``, a strategy's
    ``process_group_backend="nccl"``): the group the code runs in, set up out of view."""
    for keyword in _BACKEND_KEYWORDS:
        given = args.keywords.get(keyword)
        backend = string_value(given[0]) if given is not None else None
        if backend is not None and backend.split(":")[0].lower() in _BACKEND_NAMES:
            return ProcessGroupCreated(node, True, backend)
    return None


_BACKEND_KEYWORDS = ("backend", "process_group_backend", "dist_backend")
_BACKEND_NAMES = frozenset({"nccl", "gloo", "mpi", "ucc", "cpu", "cuda"})
"""Backends, and the devices of ``"cpu:gloo,cuda:nccl"`` mappings."""


def _distributed_name(qualname: str) -> str | None:
    for prefix in _PREFIXES:
        if qualname.startswith(prefix):
            return qualname[len(prefix) :]
    return None
