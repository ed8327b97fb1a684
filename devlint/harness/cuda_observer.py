"""The real CUDA backend's measurements: transfers and create-then-move copies, by user line.

The same counts the emulator keeps, taken from a real CUDA run by a dispatch
mode that only watches (and the same in every thread the program starts).
"""

from __future__ import annotations

import threading
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from devlint.harness import observe

aten = torch.ops.aten
CREATED = "_devlint_created"


class TransferCounter(TorchDispatchMode):
    def __init__(self, recorder: observe.Recorder) -> None:
        super().__init__()
        self.recorder = recorder

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        packet = func._overloadpacket
        if packet is aten._to_copy:
            target = kwargs.get("device")
            self._count(args[0].device, torch.device(target) if target else args[0].device, args[0])
        elif packet is aten.copy_:
            self._count(args[1].device, args[0].device, args[1])
        elif packet is aten._local_scalar_dense and args[0].is_cuda:
            self.recorder.transfer(observe.DEVICE_TO_HOST, args[0].element_size())
        result = func(*args, **kwargs)
        made = not _has_tensor(args)  # a factory, not data the program already had
        if made and isinstance(result, torch.Tensor) and result.device.type == "cpu":
            storage = _storage_of(result)
            if storage is not None:
                setattr(storage, CREATED, observe.direct_user_caller(3))
        return result

    def _count(self, source: torch.device, target: torch.device, tensor: torch.Tensor) -> None:
        size = tensor.numel() * tensor.element_size()
        if source.type == "cpu" and target.type == "cuda":
            created = getattr(_storage_of(tensor), CREATED, None)
            self.recorder.transfer(observe.HOST_TO_DEVICE, size, created)
        elif source.type == "cuda" and target.type == "cpu":
            self.recorder.transfer(observe.DEVICE_TO_HOST, size)
        elif source != target:
            self.recorder.transfer(observe.DEVICE_TO_DEVICE, size)


_unwrapped = getattr(TransferCounter.__torch_dispatch__, "__wrapped__", None)
if _unwrapped is not None:  # see emulator/dispatch.py: keep torch._dynamo unimported
    _unwrapped.__dynamo_disable = _unwrapped


def _storage_of(tensor: torch.Tensor) -> torch.UntypedStorage | None:
    """The tensor's storage; None for a layout that has none (sparse, nested: seen on an H200,
    where moving a sparse tensor failed in this counter and not in torch)."""
    if tensor.layout != torch.strided or tensor.is_nested:
        return None
    return tensor.untyped_storage()


def _has_tensor(args: tuple[Any, ...]) -> bool:
    return any(isinstance(arg, torch.Tensor) for arg in args)


def install() -> observe.Recorder:
    """Count transfers in this thread and every thread started from now on."""
    recorder = observe.Recorder()
    TransferCounter(recorder).__enter__()
    original = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]

    def bootstrap_inner(thread: threading.Thread) -> None:
        with TransferCounter(recorder):
            original(thread)

    threading.Thread._bootstrap_inner = bootstrap_inner  # type: ignore[attr-defined]
    return recorder
