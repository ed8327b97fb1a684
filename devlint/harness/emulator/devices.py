"""Where an emulated tensor lives: a tag on its storage.

A CPU build of PyTorch cannot hold a tensor whose C++ device is CUDA (autograd
asks the missing CUDA device guard for streams), so every emulated tensor is a
real CPU tensor and its *storage* says which virtual GPU holds it. Storage is
the right carrier because PyTorch keeps one Python object per storage for as
long as the storage lives: views, ``.data =`` and ``set_`` follow it, and the
tag dies with the memory it describes.
"""

from __future__ import annotations

import torch

CPU = torch.device("cpu")
DEVICE_TAG = "_devlint_device"
PINNED_TAG = "_devlint_pinned"
CREATED_TAG = "_devlint_created"
UNBOUND_TAG = "_devlint_unbound"

_real_device = torch._C.TensorBase.device.__get__
_storage = torch._C.TensorBase.untyped_storage
_no_torch_function = torch._C.DisableTorchFunction


def storage_of(tensor: torch.Tensor) -> torch.UntypedStorage | None:
    """The tensor's storage, or None for layouts that have none (sparse, nested)."""
    try:
        with _no_torch_function():
            return _storage(tensor)
    except (RuntimeError, NotImplementedError, TypeError):
        return None


def device_of(tensor: torch.Tensor) -> torch.device:
    """The device the tensor is on, as a program on a GPU machine would see it."""
    real = _real_device(tensor)
    if real.type != "cpu":
        return real
    storage = storage_of(tensor)
    return getattr(storage, DEVICE_TAG, real) if storage is not None else real


def is_emulated(tensor: torch.Tensor) -> bool:
    return device_of(tensor).type == "cuda"


def is_unbound(tensor: torch.Tensor) -> bool:
    """Allocated by C++ from some tensor's options, outside any torch call: device unknown.

    DistributedDataParallel's reducer sizes its buckets from the parameters'
    options; on this build those say ``cpu`` whatever the parameters' virtual
    device. Such a tensor takes the device of the first GPU tensor it meets.
    """
    return bool(getattr(storage_of(tensor), UNBOUND_TAG, False))


def bind(tensor: torch.Tensor, device: torch.device) -> None:
    storage = storage_of(tensor)
    if storage is not None and getattr(storage, UNBOUND_TAG, False):
        delattr(storage, UNBOUND_TAG)
        setattr(storage, DEVICE_TAG, device)


def leave_on_cpu(tensor: torch.Tensor) -> None:
    """Undo the placement of a result that a CUDA build keeps on the host."""
    storage = storage_of(tensor)
    if storage is not None and hasattr(storage, DEVICE_TAG):
        delattr(storage, DEVICE_TAG)


def storage_device(storage: object) -> torch.device | None:
    """The virtual GPU of a (typed or untyped) storage, or None."""
    untyped = getattr(storage, "_untyped_storage", storage)
    return getattr(untyped, DEVICE_TAG, None)


def is_pinned(tensor: torch.Tensor) -> bool:
    return bool(getattr(storage_of(tensor), PINNED_TAG, False))


def mark_pinned(tensor: torch.Tensor) -> None:
    storage = storage_of(tensor)
    if storage is not None:
        setattr(storage, PINNED_TAG, True)


def nbytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()


_TYPE_NAMES = {
    torch.float32: "Float",
    torch.float64: "Double",
    torch.float16: "Half",
    torch.bfloat16: "BFloat16",
    torch.int64: "Long",
    torch.int32: "Int",
    torch.int16: "Short",
    torch.int8: "Char",
    torch.uint8: "Byte",
    torch.bool: "Bool",
    torch.complex64: "ComplexFloat",
    torch.complex128: "ComplexDouble",
}


def type_string(tensor: torch.Tensor) -> str:
    """C++ ``Tensor::toString()``: ``CUDAFloatType``, ``CPULongType``."""
    backend = "CUDA" if is_emulated(tensor) else "CPU"
    return f"{backend}{_TYPE_NAMES.get(tensor.dtype, str(tensor.dtype))}Type"


def legacy_type_name(tensor: torch.Tensor) -> str:
    """``Tensor.type()``: ``torch.cuda.FloatTensor``."""
    base = _TYPE_NAMES.get(tensor.dtype, "Float")
    return f"torch.cuda.{base}Tensor" if is_emulated(tensor) else f"torch.{base}Tensor"
