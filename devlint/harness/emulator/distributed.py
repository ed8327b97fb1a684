"""``torch.distributed`` over the virtual GPUs: NCCL process groups run on gloo.

A CPU build of PyTorch has no NCCL, and every emulated tensor is a CPU tensor
underneath, so gloo can run the same collectives. A program written for GPUs
asks for ``nccl``; the emulator gives it gloo (``dist.get_backend()`` then
says ``gloo``), and ``dist.is_nccl_available()`` answers as a CUDA build does.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import torch

from devlint.harness.emulator.patches import Patches

GLOO = "gloo"
_BACKEND_TAKERS = (
    "init_process_group",
    "new_group",
    "new_subgroups",
    "new_subgroups_by_enumeration",
)


def install(patches: Patches) -> None:
    if not torch.distributed.is_available():
        return
    from torch.distributed import distributed_c10d

    for name in _BACKEND_TAKERS:
        original = getattr(distributed_c10d, name, None)
        if original is None:
            continue
        replacement = _on_gloo(original)
        patches.set(distributed_c10d, name, replacement)
        if getattr(torch.distributed, name, None) is original:
            patches.set(torch.distributed, name, replacement)
    patches.set(torch.distributed, "is_nccl_available", lambda: True)


def _on_gloo(original: Callable[..., Any]) -> Callable[..., Any]:
    """``original`` with any NCCL ``backend=`` (positional or keyword) replaced by gloo."""
    position = list(inspect.signature(original).parameters).index("backend")

    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        if len(args) > position:
            args = (*args[:position], gloo_for(args[position]), *args[position + 1 :])
        elif "backend" in kwargs:
            kwargs["backend"] = gloo_for(kwargs["backend"])
        return original(*args, **kwargs)

    return call


def gloo_for(backend: Any) -> Any:
    """``nccl`` and ``cuda:nccl,cpu:gloo`` become ``gloo``; other backends stay as they are."""
    if isinstance(backend, str) and "nccl" in backend.lower():
        return GLOO
    return backend
