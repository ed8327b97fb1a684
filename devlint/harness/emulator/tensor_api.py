"""The Python face of a tensor on a virtual GPU: ``.device``, ``.to()``, ``.numpy()``, ….

These are attribute patches rather than a torch function mode because a mode
is switched off inside its own handler: code that PyTorch runs in Python on
the program's behalf (autograd functions, ``_tensor_str``) would see the CPU.
"""

from __future__ import annotations

from typing import Any

import torch

from devlint.harness import observe
from devlint.harness.emulator import errors
from devlint.harness.emulator.devices import (
    CPU,
    DEVICE_TAG,
    device_of,
    legacy_type_name,
    nbytes,
    storage_device,
)
from devlint.harness.emulator.patches import Patches
from devlint.harness.emulator.state import EmulatorState
from devlint.harness.emulator.transfers import transfer_to

_Base = torch._C.TensorBase
UninitializedTensorMixin = torch.nn.parameter.UninitializedTensorMixin


def install(patches: Patches, state: EmulatorState) -> None:
    def resolve(device: Any) -> torch.device | None:
        """A ``device=`` argument as a concrete device (``cuda`` is the current GPU)."""
        if device is None:
            return None
        if isinstance(device, int):
            device = torch.device("cuda", device)
        device = torch.device(device)
        if device.type == "cuda" and device.index is None:
            return state.cuda()
        return device

    def move(tensor: torch.Tensor, target: torch.device, **options: Any) -> torch.Tensor:
        """A copy of ``tensor`` on ``target``, through the dispatcher (autograd records it)."""
        fresh = options.pop("fresh", False)
        options = {key: value for key, value in options.items() if value is not None}
        source = device_of(tensor)
        with transfer_to(target, fresh):
            moved = torch.ops.aten._to_copy.default(tensor, device=target, **options)
        if moved.grad_fn is not None and source != target:
            moved.grad_fn.register_hook(gradients_moved_to(source))
        return moved

    def gradients_moved_to(source: torch.device) -> Any:
        """The gradient of a copy goes back to the source's device, as ``ToCopyBackward`` does
        (here C++ sees one device and leaves it where the copy's gradient was)."""

        def hook(inputs: tuple[Any, ...], outputs: tuple[Any, ...]) -> tuple[Any, ...]:
            return tuple(
                grad if grad is None or device_of(grad) == source else move(grad, source)
                for grad in inputs
            )

        return hook

    def to(self: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        device, dtype, non_blocking, copy, memory_format = _parse_to(args, kwargs)
        here = device_of(self)
        target = resolve(device) or here
        if isinstance(self, UninitializedTensorMixin) and (target != here or dtype):
            # A LazyModule moved before its first call: nothing to copy, a new placeholder
            # there (torch lets ``to`` through an uninitialised parameter's torch function).
            return type(self)(self.requires_grad, device=target, dtype=dtype or self.dtype)
        if target == here:
            if here.type == "cpu":
                return _Base.to(self, *args, **kwargs)
            return _Base.to(
                self,
                dtype=dtype or self.dtype,
                non_blocking=non_blocking,
                copy=copy,
                memory_format=memory_format,
            )
        return move(
            self, target, dtype=dtype, non_blocking=non_blocking, memory_format=memory_format
        )

    def cuda(
        self: torch.Tensor,
        device: Any = None,
        non_blocking: bool = False,
        memory_format: torch.memory_format = torch.preserve_format,
    ) -> torch.Tensor:
        target = state.cuda() if device is None else resolve(device)
        if target is None or target.type != "cuda":
            raise ValueError(f"Invalid device, must be cuda device, got {device}")
        return to(self, target, non_blocking=non_blocking, memory_format=memory_format)

    def cpu(self: torch.Tensor, memory_format: torch.memory_format = torch.preserve_format):
        if device_of(self).type == "cpu":
            return _Base.cpu(self, memory_format=memory_format)
        return to(self, CPU, memory_format=memory_format)

    def numpy(self: torch.Tensor, *, force: bool = False) -> Any:
        here = device_of(self)
        if here.type == "cuda":
            if not force:
                error = errors.numpy_of_device_tensor(here)
                state.recorder.device_error(error)
                raise error
            return _Base.numpy(cpu(self.detach()), force=True)
        return _Base.numpy(self, force=force)

    def tolist(self: torch.Tensor) -> Any:
        if device_of(self).type == "cuda":
            state.initialize(existing=True)
            state.synchronize()
            state.recorder.transfer(observe.DEVICE_TO_HOST, nbytes(self))
        return _Base.tolist(self)

    def get_device(self: torch.Tensor) -> int:
        here = device_of(self)
        return here.index if here.type == "cuda" else -1

    def type_(self: torch.Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any):
        """As ``THPVariable_type``: a dtype keeps the device; a legacy type name's prefix
        (``torch.cuda.``) picks CUDA or the host, keeping the tensor's own device of that kind."""
        here = device_of(self)
        if dtype is None:
            return legacy_type_name(self) if here.type == "cuda" else _Base.type(self)
        if isinstance(dtype, torch.dtype):
            return to(self, dtype=dtype, non_blocking=non_blocking, **kwargs)
        name = _legacy_type_name_of(dtype)
        on_cuda = name.startswith(_CUDA_TYPE_PREFIX)
        host_name = "torch." + name.removeprefix(_CUDA_TYPE_PREFIX) if on_cuda else name
        cast = _Base.type(torch.empty(0), host_name).dtype  # raises PyTorch's "invalid type"
        same_kind = on_cuda == (here.type == "cuda")
        target = here if same_kind else (state.cuda() if on_cuda else CPU)
        return to(self, target, dtype=cast, non_blocking=non_blocking, **kwargs)

    def type_as(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
        """As ``Tensor::type_as``, ``self.to(other.options())``: ``other``'s dtype *and* device
        (the host build's own type_as would keep an emulated GPU operand's host placement)."""
        return to(self, device_of(other), dtype=other.dtype)

    def record_stream(self: torch.Tensor, stream: Any) -> None:
        if device_of(self).type != "cuda":
            _Base.record_stream(self, stream)

    def take_along_dim(self: torch.Tensor, indices: torch.Tensor, dim: Any = None, **kwargs: Any):
        here, there = device_of(self), device_of(indices)
        if here != there:
            error = errors.take_along_dim_devices(here, there)
            state.recorder.device_error(error)
            raise error
        return original_take_along_dim(self, indices, dim, **kwargs)

    def constructor(original: Any, default_here: bool = False):
        """``torch.tensor(data, device=...)`` and kin: build on the host, then copy."""

        def build(*args: Any, **kwargs: Any) -> torch.Tensor:
            owner = args[0] if default_here else None
            target = resolve(kwargs.get("device"))
            if target is None and owner is not None:
                target = device_of(owner)
            data = args[1] if default_here else args[0]
            leaves_gpu = (
                target is not None
                and isinstance(data, torch.Tensor)
                and device_of(data).type == "cuda"
                and target.type == "cpu"
            )
            if target is None or (target.type != "cuda" and not leaves_gpu):
                return original(*args, **kwargs)
            requires_grad = kwargs.pop("requires_grad", False)
            if isinstance(data, torch.Tensor) and not default_here:
                kwargs.pop("device", None)
                made = to(data, target, **{k: v for k, v in kwargs.items() if k == "dtype"})
                return made.detach().requires_grad_() if requires_grad else made
            host = original(*args, **{**kwargs, "device": CPU})
            moved = move(host, target, fresh=True)
            return moved.requires_grad_() if requires_grad else moved

        return build

    def storage_clone(self: torch.UntypedStorage) -> torch.UntypedStorage:
        copy = original_storage_clone(self)
        device = storage_device(self)
        if device is not None:
            setattr(copy, DEVICE_TAG, device)
            state.allocate(copy, device.index)
        return copy

    patches.set(torch, "device", _device_type_with_gpu_ordinals(torch.device))
    patches.set(torch._C._nn, "_parse_to", _parse_to_with_gpu_ordinals(torch._C._nn._parse_to))
    original_take_along_dim = torch.take_along_dim
    original_storage_clone = torch.UntypedStorage.clone
    tensor = torch.Tensor
    patches.set(tensor, "device", property(device_of))
    patches.set(tensor, "is_cuda", property(lambda self: device_of(self).type == "cuda"))
    patches.set(tensor, "is_cpu", property(lambda self: device_of(self).type == "cpu"))
    for name, value in {
        "to": to,
        "cuda": cuda,
        "cpu": cpu,
        "numpy": numpy,
        "tolist": tolist,
        "get_device": get_device,
        "type": type_,
        "type_as": type_as,
        "record_stream": record_stream,
        "take_along_dim": take_along_dim,
        "new_tensor": constructor(_Base.new_tensor, default_here=True),
    }.items():
        patches.set(tensor, name, value)
    patches.set(torch, "take_along_dim", take_along_dim)
    for name in ("tensor", "as_tensor", "asarray"):
        patches.set(torch, name, constructor(getattr(torch, name)))
    patches.set(torch.UntypedStorage, "clone", storage_clone)


def _device_type_with_gpu_ordinals(real: type) -> type:
    """``torch.device(0)`` means ``cuda:0`` on a CUDA build; a CPU build asks for an accelerator.

    The stand-in makes only that call differ: instances and ``isinstance`` stay the real type.
    """

    class DeviceType(type):
        def __instancecheck__(cls, instance: object) -> bool:
            return isinstance(instance, real)

        def __subclasscheck__(cls, subclass: type) -> bool:
            return issubclass(subclass, real)

        def __call__(cls, *args: Any, **kwargs: Any) -> torch.device:
            if len(args) == 1 and not kwargs and isinstance(args[0], int):
                return real("cuda", args[0])
            return real(*args, **kwargs)

    class device(metaclass=DeviceType):
        __doc__ = real.__doc__

    # ``torch.device.__reduce__`` names whatever ``torch.device`` is, so pickle looks the
    # stand-in up by this name (a checkpoint or a DataLoader worker's batch holding a device).
    device.__module__, device.__qualname__ = "torch", "device"
    return device


def _parse_to_with_gpu_ordinals(original: Any) -> Any:
    """``Module.to(0)`` parses its arguments in C++, which reads an int as an accelerator."""

    def parse_to(*args: Any, **kwargs: Any) -> Any:
        if args and _is_ordinal(args[0]):
            args = (torch._C.device("cuda", args[0]), *args[1:])
        if _is_ordinal(kwargs.get("device")):
            kwargs["device"] = torch._C.device("cuda", kwargs["device"])
        return original(*args, **kwargs)

    return parse_to


_CUDA_TYPE_PREFIX = "torch.cuda."


def _legacy_type_name_of(dtype: Any) -> str:
    """``Tensor.type``'s non-dtype argument as its name: ``"torch.cuda.HalfTensor"``."""
    if isinstance(dtype, str):
        return dtype
    if isinstance(dtype, type):
        return "torch.Tensor" if dtype is torch.Tensor else f"{dtype.__module__}.{dtype.__name__}"
    raise TypeError("dtype must be a type, str, or dtype object")


def _is_ordinal(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_to(args: tuple[Any, ...], kwargs: dict[str, Any]):
    """``Tensor.to``'s three signatures: (device, dtype, …), (dtype, …), (tensor, …)."""
    rest = list(args)
    device = dtype = None
    if rest and isinstance(rest[0], torch.Tensor):
        other = rest.pop(0)
        device, dtype = device_of(other), other.dtype
    elif rest and isinstance(rest[0], torch.dtype):
        dtype = rest.pop(0)
    elif rest and not isinstance(rest[0], bool):
        device = rest.pop(0)
        if rest and (rest[0] is None or isinstance(rest[0], torch.dtype)):
            dtype = rest.pop(0)  # ``Module.to`` passes ``t.to(device, None, non_blocking)``
    device = kwargs.get("device", device)
    dtype = kwargs.get("dtype", dtype)
    if "other" in kwargs:
        device, dtype = device_of(kwargs["other"]), kwargs["other"].dtype
    non_blocking = kwargs.get("non_blocking", rest[0] if rest else False)
    copy = kwargs.get("copy", rest[1] if len(rest) > 1 else False)
    memory_format = kwargs.get("memory_format", torch.preserve_format)
    return device, dtype, non_blocking, copy, memory_format
