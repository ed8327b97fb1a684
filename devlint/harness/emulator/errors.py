"""PyTorch's own error texts for device misuse, worded as a CUDA build words them.

Each function returns the exception real CUDA raises (same type, same text);
the C++ source each one copies is named in its docstring.
"""

from __future__ import annotations

import torch


def found_two_devices(common: torch.device, other: torch.device) -> RuntimeError:
    """TensorIterator (``compute_types``): elementwise ops, operators, ``where``."""
    return RuntimeError(
        "Expected all tensors to be on the same device, but found at least two devices, "
        f"{common} and {other}!"
    )


def argument_on_other_device(
    argument: str, device: torch.device, common: torch.device, method: str
) -> RuntimeError:
    """``c10::impl::common_device_check_failure``: the generated device check of a kernel."""
    return RuntimeError(
        f"Expected all tensors to be on the same device, but got {argument} is on {device}, "
        f"different from other tensors on {common} (when checking argument in method {method})"
    )


def too_many_cpu_scalars() -> RuntimeError:
    """TensorIterator: one CPU 0-dim tensor may join a CUDA kernel, not two."""
    return RuntimeError("Trying to pass too many CPU scalars to non-CPU kernel!")


def indices_on_other_device(indexed: torch.device) -> RuntimeError:
    """``index`` / ``index_put_`` (``TensorAdvancedIndexing.cpp``)."""
    return RuntimeError(
        f"indices should be either on cpu or on the same device as the indexed tensor ({indexed})"
    )


def mask_on_other_device(mask: torch.device, self: torch.device) -> RuntimeError:
    """``masked_fill_``."""
    return RuntimeError(
        f"expected self and mask to be on the same device, but got mask on {mask} "
        f"and self on {self}"
    )


def take_along_dim_devices(input: torch.device, indices: torch.device) -> RuntimeError:
    """``take_along_dim``."""
    return RuntimeError(
        "torch.take_along_dim(): input and indices should be on the same device, but input is "
        f"on {input} and indices is on {indices}"
    )


def convolution_types(input_type: str, weight_type: str, mkldnn: bool) -> RuntimeError:
    """``check_input_same_type_as_parameters`` (``Convolution.cpp``)."""
    suffix = " or input should be a MKLDNN tensor and weight is a dense tensor" if mkldnn else ""
    return RuntimeError(
        f"Input type ({input_type}) and weight type ({weight_type}) should be the same{suffix}"
    )


def numpy_of_device_tensor(device: torch.device) -> TypeError:
    """``Tensor.numpy()`` (``tensor_numpy.cpp``)."""
    return TypeError(
        f"can't convert {device} device type tensor to numpy. Use Tensor.cpu() to copy the "
        "tensor to host memory first."
    )


def cannot_pin(type_string: str) -> RuntimeError:
    """``_pin_memory`` (``Memory.cpp``)."""
    return RuntimeError(f"cannot pin '{type_string}' only dense CPU tensors can be pinned")


def invalid_device_ordinal() -> RuntimeError:
    """A CUDA runtime error: the device index is not below ``device_count()``."""
    error_type = getattr(torch, "AcceleratorError", RuntimeError)
    return error_type(
        "CUDA error: invalid device ordinal\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1"
    )


def generator_on_other_device(expected: torch.device, found: torch.device) -> RuntimeError:
    """``check_generator`` (``ATen/core/DistributionsHelper.h``)."""
    return RuntimeError(
        f"Expected a '{expected.type}' device type for generator but found '{found.type}'"
    )


def forked_device_memory() -> RuntimeError:
    """A CUDA runtime error: a forked child touching device memory its poisoned parent made
    (seen on an H200; making new device memory fails earlier, in PyTorch's lazy init)."""
    error_type = getattr(torch, "AcceleratorError", RuntimeError)
    return error_type(
        "CUDA error: initialization error\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1"
    )


def no_cpu_backend() -> RuntimeError:
    """``ProcessGroup::getBackend``: a collective on CPU tensors in a group with NCCL alone."""
    return RuntimeError("No backend type associated with device type cpu")


def lengths_not_on_cpu(dim: int, device: torch.device, scalar_type: str) -> RuntimeError:
    """``_pack_padded_sequence`` (``PackedSequence.cpp``): lengths are read on the host."""
    return RuntimeError(
        "'lengths' argument should be a 1D CPU int64 tensor, but got "
        f"{dim}D {device} {scalar_type} tensor"
    )
