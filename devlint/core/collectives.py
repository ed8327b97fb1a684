"""``torch.distributed``: which calls are collectives, and which backends a file asks for.

A collective runs on the backend its process group has for the tensors'
device. ``init_process_group("nccl")`` gives a group with NCCL only, which
has no CPU backend; a group asked for without a backend (PyTorch 2 pairs
gloo with NCCL) or with gloo can reduce CPU tensors too.
"""

from __future__ import annotations

import libcst as cst

from devlint.core import torch_facts
from devlint.core.events import Collective, Operand, ProcessGroupCreated
from devlint.core.scopes import Args
from devlint.core.syntax import string_value
from devlint.core.values import is_tensor_like


def distributed_event(qualname: str, node: cst.Call, args: Args) -> object | None:
    """The event a ``torch.distributed`` call gives rules, if it is a collective or a group."""
    name = _distributed_name(qualname)
    if name is None:
        return None
    if name in torch_facts.GROUP_MAKERS:
        given = args.get(torch_facts.GROUP_MAKERS[name], "backend")
        backend = string_value(given[0]) if given is not None else None
        return ProcessGroupCreated(node, given is not None, backend)
    if name not in torch_facts.COLLECTIVES:
        return None
    tensor_parameters, (group_position, group_keyword) = torch_facts.COLLECTIVES[name]
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
    for keyword in torch_facts.BACKEND_KEYWORDS:
        given = args.keywords.get(keyword)
        backend = string_value(given[0]) if given is not None else None
        if backend is not None and backend.split(":")[0].lower() in torch_facts.BACKEND_NAMES:
            return ProcessGroupCreated(node, True, backend)
    return None


def _distributed_name(qualname: str) -> str | None:
    for prefix in torch_facts.DISTRIBUTED_PREFIXES:
        if qualname.startswith(prefix):
            return qualname[len(prefix) :]
    return None
