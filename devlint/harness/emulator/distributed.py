"""``torch.distributed`` over the virtual GPUs: NCCL process groups run on gloo.

A CPU build of PyTorch has no NCCL, and every emulated tensor is a CPU tensor
underneath, so gloo can run the same collectives. A program written for GPUs
asks for ``nccl``; the emulator gives it gloo (``dist.get_backend()`` then
says ``gloo``), and ``dist.is_nccl_available()`` answers as a CUDA build does.

A group asked for with NCCL alone keeps NCCL's one limit that gloo lacks: it
has no CPU backend, so a collective given a CPU tensor fails as on a GPU
machine ("No backend type associated with device type cpu").
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import torch

from devlint.harness.emulator import errors
from devlint.harness.emulator.patches import Patches
from devlint.harness.emulator.state import EmulatorState

GLOO = "gloo"
_COLLECTIVES = (
    "all_reduce",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter_tensor",
    "gather",
    "scatter",
    "send",
    "recv",
    "isend",
    "irecv",
)
_BACKEND_TAKERS = (
    "init_process_group",
    "new_group",
    "new_subgroups",
    "new_subgroups_by_enumeration",
)


def install(patches: Patches, state: EmulatorState) -> None:
    if not torch.distributed.is_available():
        return
    from torch.distributed import distributed_c10d

    nccl_only: list[object] = []  # the groups asked for with NCCL alone
    patches.defer(nccl_only.clear)
    for names, wrap in (
        (_BACKEND_TAKERS, functools.partial(_on_gloo, nccl_only=nccl_only)),
        (_COLLECTIVES, functools.partial(_without_cpu_backend, nccl_only=nccl_only, state=state)),
    ):
        for name in names:
            original = getattr(distributed_c10d, name, None)
            if original is None:
                continue
            replacement = wrap(original)
            patches.set(distributed_c10d, name, replacement)
            if getattr(torch.distributed, name, None) is original:
                patches.set(torch.distributed, name, replacement)
    patches.set(torch.distributed, "is_nccl_available", lambda: True)


def _on_gloo(original: Callable[..., Any], nccl_only: list[object]) -> Callable[..., Any]:
    """``original`` with any NCCL ``backend=`` (positional or keyword) replaced by gloo.

    The group it makes is added to ``nccl_only`` when NCCL alone was asked for.
    """
    position = list(inspect.signature(original).parameters).index("backend")

    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        if len(args) > position:
            asked = args[position]
            args = (*args[:position], gloo_for(asked), *args[position + 1 :])
        else:
            asked = kwargs.get("backend")
            if "backend" in kwargs:
                kwargs["backend"] = gloo_for(asked)
        group = original(*args, **kwargs)
        if isinstance(asked, str) and asked.lower() == "nccl":
            made = group if original.__name__ != "init_process_group" else _default_group()
            nccl_only.append(made)
        return group

    return call


def _without_cpu_backend(
    original: Callable[..., Any], nccl_only: list[object], state: EmulatorState
) -> Callable[..., Any]:
    """``original`` failing as NCCL does when a group without a CPU backend gets a CPU tensor."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        given = signature.bind_partial(*args, **kwargs).arguments
        group = given.get("group")
        if group is None or group is torch.distributed.GroupMember.WORLD:
            group = _default_group()
        if any(group is made for made in nccl_only) and any(
            tensor.device.type == "cpu" for tensor in _tensors(given.values())
        ):
            error = errors.no_cpu_backend()
            state.recorder.device_error(error)
            raise error
        return original(*args, **kwargs)

    return call


def _default_group() -> object | None:
    from torch.distributed import distributed_c10d

    return distributed_c10d._get_default_group() if torch.distributed.is_initialized() else None


def _tensors(arguments: Any) -> list[torch.Tensor]:
    """The tensors among a call's arguments, including those in lists (``all_gather``)."""
    found: list[torch.Tensor] = []
    for argument in arguments:
        items = argument if isinstance(argument, (list, tuple)) else (argument,)
        found.extend(item for item in items if isinstance(item, torch.Tensor))
    return found


def gloo_for(backend: Any) -> Any:
    """``nccl`` and ``cuda:nccl,cpu:gloo`` become ``gloo``; other backends stay as they are."""
    if isinstance(backend, str) and "nccl" in backend.lower():
        return GLOO
    return backend
