"""Which torch call is running, and on which device its tensors live.

C++ code builds helper tensors from ``input.options()``; on this CPU build
those options say ``cpu`` even when the input is on a virtual GPU, so
``F.one_hot(cuda_ids)`` would build its zeros on the CPU. A function mode
remembers the device of the call's tensors (and any ``device=`` the caller
wrote), and the dispatch mode places such helper tensors there, as CUDA would.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from devlint.harness.emulator.devices import device_of, leave_on_cpu

_local = threading.local()
_GETTERS_AND_QUERIES = ("__get__", "__set__", "untyped_storage", "dim", "size", "numel")
_HOST_OUTPUTS = {"_pad_packed_sequence": 1}
"""Results that C++ builds from a host argument's options (the lengths, from a packed
sequence's CPU ``batch_sizes``): on the CPU whatever device the call's data is on."""


@dataclass(frozen=True)
class Call:
    requested: torch.device | None
    """The ``device=`` the caller passed, if any."""
    operands: torch.device | None
    """The first virtual GPU among the call's tensor arguments, if any."""
    generator: torch.device | None = None
    """The device of the ``generator=`` the caller passed, if any (the dispatcher hands the
    operator a plain host generator in its place)."""


NO_CALL = Call(None, None)


def current() -> Call:
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else NO_CALL


class CallContext(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__name__", "") in _GETTERS_AND_QUERIES:
            return func(*args, **kwargs)
        requested = kwargs.get("device")
        if isinstance(requested, int) and not isinstance(requested, bool):
            requested = kwargs["device"] = torch._C.device("cuda", requested)  # CUDA's ordinal
        generator = kwargs.get("generator")
        call = Call(
            _as_device(requested),
            _operands_device(args, kwargs),
            generator.device if isinstance(generator, torch.Generator) else None,
        )
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(call)
        try:
            result = func(*args, **kwargs)
        finally:
            stack.pop()
        host = _HOST_OUTPUTS.get(getattr(func, "__name__", ""))
        if host is not None:
            leave_on_cpu(result[host])
        return result


def _as_device(value: Any) -> torch.device | None:
    if value is None:
        return None
    try:
        return value if isinstance(value, torch._C.device) else torch._C.device(value)
    except (RuntimeError, TypeError):
        return None


def _operands_device(args: tuple[Any, ...], kwargs: dict[str, Any]) -> torch.device | None:
    for value in (*args, *kwargs.values()):
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if isinstance(item, torch.Tensor):
                device = device_of(item)
                if device.type == "cuda":
                    return device
    return None
