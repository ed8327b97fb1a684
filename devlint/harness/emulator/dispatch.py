"""Every ATen call on a virtual GPU: PyTorch's device rules, then the CPU kernel.

The mode sees each operator after autograd, with its schema. It decides the
device of the result the way a CUDA build would (or raises the error a CUDA
build raises), runs the CPU kernel on the real values, and tags new storages
with the result's device. Transfers are counted as they happen.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from devlint.harness import observe
from devlint.harness.emulator import context, errors, ops
from devlint.harness.emulator.devices import (
    CPU,
    CREATED_TAG,
    DEVICE_TAG,
    UNBOUND_TAG,
    bind,
    device_of,
    is_pinned,
    is_unbound,
    legacy_type_name,
    mark_pinned,
    nbytes,
    storage_of,
    type_string,
)
from devlint.harness.emulator.state import EmulatorState, PendingCopy
from devlint.harness.emulator.transfers import explicit_target

Handler = Callable[[EmulatorState, Any, tuple, dict], Any]
aten = torch.ops.aten


class EmulatedCuda(TorchDispatchMode):
    def __init__(self, state: EmulatorState) -> None:
        super().__init__()
        self.state = state

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        handler = _handler(func._overloadpacket)
        try:
            if handler is not None:
                return handler(self.state, func, args, kwargs)
            return _generic(self.state, func, args, kwargs)
        except (RuntimeError, TypeError) as error:
            if getattr(error, "_devlint_device_error", False):
                self.state.recorder.device_error(error)
            raise


# TorchDispatchMode wraps __torch_dispatch__ in torch._disable_dynamo, which imports
# torch._dynamo (two seconds) on the first call; nothing here runs under dynamo.
_unwrapped = getattr(EmulatedCuda.__torch_dispatch__, "__wrapped__", None)
if _unwrapped is not None:
    _unwrapped.__dynamo_disable = _unwrapped


def _raise(error: Exception) -> None:
    """Raise a device error, marked so that the mode records where the user caused it."""
    error._devlint_device_error = True  # type: ignore[attr-defined]
    raise error


# generic operators ----------------------------------------------------------------

_LIKE = ("new_", "_like", "empty_strided")


def _generic(state: EmulatorState, func: Any, args: tuple, kwargs: dict) -> Any:
    op = ops.info(func)
    named = list(ops.named_tensors(op, args, kwargs))
    requested = _requested(kwargs)
    if not named:
        return _factory(state, func, args, kwargs, requested)
    unbound = [pair for pair in named if is_unbound(pair[1])]
    if unbound:
        named = [pair for pair in named if not is_unbound(pair[1])] or unbound
    devices = [device_of(tensor) for _, tensor in named]
    if "device" in op.arguments and (op.name.startswith("new_") or op.name.endswith(_LIKE)):
        target = _like_target(requested, devices[0])
    elif all(device.type == "cpu" for device in devices) and requested is None:
        return func(*args, **kwargs)
    else:
        target = _common_device(op, named, devices)
    existing = any(device.type == "cuda" for device in devices)
    _check_generator(kwargs, target)
    if target.type == "cuda" or existing:
        state.initialize(existing=existing)
    if target.type == "cuda":
        target = _checked(state, target)
    result = func(*args, **_on_cpu(kwargs))
    if target.type == "cuda":
        for _, tensor in unbound:
            bind(tensor, target)
        inputs = {id(storage_of(tensor)) for _, tensor in named}
        _place_outputs(state, result, target, inputs)
    return result


def _requested(kwargs: dict) -> torch.device | None:
    device = kwargs.get("device")
    if device is None or isinstance(device, torch._C.device):
        return device
    return torch._C.device(device)


def _on_cpu(kwargs: dict) -> dict:
    """The same call for the CPU kernel: no CUDA device, no pinning (the emulator pins)."""
    if kwargs.get("device") is None and not kwargs.get("pin_memory"):
        return kwargs
    changed = dict(kwargs)
    if changed.get("device") is not None:
        changed["device"] = CPU
    if changed.get("pin_memory"):
        changed["pin_memory"] = False
    return changed


def _factory(
    state: EmulatorState, func: Any, args: tuple, kwargs: dict, requested: torch.device | None
) -> Any:
    """A tensor made from nothing: on the requested device, or where its caller computes."""
    target = requested or CPU
    call = context.current()
    if target.type == "cpu" and call.requested is None and call.operands is not None:
        target = call.operands  # built from a GPU tensor's options inside a torch call
    _check_generator(kwargs, target)
    pinned = bool(kwargs.get("pin_memory"))
    if target.type == "cuda" or pinned:
        state.initialize()
    if target.type == "cuda":
        target = _checked(state, target)
        result = func(*args, **_on_cpu(kwargs))
        _place_outputs(state, result, target, set())
        return result
    result = func(*args, **_on_cpu(kwargs)) if pinned else func(*args, **kwargs)
    if isinstance(result, torch.Tensor):
        if pinned:
            mark_pinned(result)
        elif call is context.NO_CALL and requested is not None and "pin_memory" not in kwargs:
            setattr(storage_of(result), UNBOUND_TAG, True)  # C++ sized it from some options
        _note_creation(result)
    return result


def _check_generator(kwargs: dict, target: torch.device) -> None:
    """A generator samples on its own device only (``check_generator`` in ATen)."""
    if kwargs.get("generator") is None:
        return
    generator = context.current().generator or kwargs["generator"].device
    if generator.type != target.type:
        _raise(errors.generator_on_other_device(target, generator))


def _like_target(requested: torch.device | None, source: torch.device) -> torch.device:
    """``new_zeros`` / ``zeros_like``: the source's device, unless the caller asked otherwise.

    C++ passes ``device=cpu`` (the source's C++ options) when nobody asked, so a CPU
    request counts only when the torch call itself was given ``device=``.
    """
    if requested is None:
        return source
    if requested.type == "cpu" and context.current().requested is None:
        return source
    return requested


def _common_device(op: ops.OpInfo, named: list, devices: list[torch.device]) -> torch.device:
    if op.pointwise:
        return _iterator_device(op, named, devices)
    common: torch.device | None = None
    for (name, _), device in zip(named, devices, strict=True):
        if common is None:
            common = device
        elif device != common:
            _raise(errors.argument_on_other_device(name, device, common, op.method))
    return common or CPU


def _iterator_device(op: ops.OpInfo, named: list, devices: list[torch.device]) -> torch.device:
    """TensorIterator: the first operand that is not a CPU 0-dim input decides."""
    in_place = op.name.endswith("_")

    def cpu_scalar(name: str, tensor: torch.Tensor, device: torch.device) -> bool:
        output = name == "out" or (in_place and name == "self")
        return device.type == "cpu" and tensor.dim() == 0 and not output

    common = next(
        (d for (n, t), d in zip(named, devices, strict=True) if not cpu_scalar(n, t, d)), CPU
    )
    scalars = 0
    for (name, tensor), device in zip(named, devices, strict=True):
        if device == common:
            continue
        if common.type == "cuda" and cpu_scalar(name, tensor, device):
            scalars += 1
            if scalars > 1:
                _raise(errors.too_many_cpu_scalars())
            continue
        _raise(errors.found_two_devices(common, device))
    return common


def _checked(state: EmulatorState, device: torch.device) -> torch.device:
    index = state.current if device.index is None else device.index
    if not 0 <= index < state.gpus:
        _raise(errors.invalid_device_ordinal())
    return torch.device("cuda", index)


def _outputs(result: Any) -> Iterator[torch.Tensor]:
    if isinstance(result, torch.Tensor):
        yield result
    elif isinstance(result, (list, tuple)):
        for item in result:
            yield from _outputs(item)


def _place_outputs(
    state: EmulatorState, result: Any, device: torch.device, inputs: set[int]
) -> None:
    for tensor in _outputs(result):
        storage = storage_of(tensor)
        if storage is None or id(storage) in inputs or hasattr(storage, DEVICE_TAG):
            continue
        setattr(storage, DEVICE_TAG, device)
        state.allocate(storage, device.index)


def _note_creation(tensor: torch.Tensor) -> None:
    """Remember the user's line that made a host tensor itself (to spot create-then-move)."""
    storage = storage_of(tensor)
    if storage is not None:
        setattr(storage, CREATED_TAG, observe.direct_user_caller(3))


# transfers ---------------------------------------------------------------------------


def _to_copy(state: EmulatorState, func: Any, args: tuple, kwargs: dict) -> Any:
    source = args[0]
    here = device_of(source)
    requested = _requested(kwargs)
    explicit = explicit_target()
    if explicit is not None:
        target = explicit.device
    elif requested is not None and requested.type == "cuda":
        target = requested
    else:
        target = here  # a dtype or layout change; C++ passes its own (cpu) device
    if target.type == "cuda":
        target = _checked(state, target)
    if target.type == "cuda" or here.type == "cuda":
        state.initialize(existing=here.type == "cuda")
    non_blocking = bool(kwargs.get("non_blocking"))
    cpu_kwargs = {**_on_cpu(kwargs), "device": CPU}
    size = nbytes(source)
    if here.type == "cuda" and target.type == "cpu":
        state.recorder.transfer(observe.DEVICE_TO_HOST, size)
        if non_blocking:
            return _copy_in_flight(state, func(*args, **cpu_kwargs))
        state.synchronize()
    elif here.type == "cpu" and target.type == "cuda":
        created = None if explicit is not None and explicit.fresh else _created_at(source)
        state.recorder.transfer(observe.HOST_TO_DEVICE, size, created)
    elif here != target:
        state.recorder.transfer(observe.DEVICE_TO_DEVICE, size)
    result = func(*args, **cpu_kwargs)
    if target.type == "cuda":
        _place_outputs(state, result, target, set())
    elif kwargs.get("pin_memory"):
        mark_pinned(result)
    return result


def _copy_in_flight(state: EmulatorState, values: torch.Tensor) -> torch.Tensor:
    """A pinned host buffer that will hold ``values`` once the host synchronises."""
    destination = torch.empty_like(values)
    destination.fill_(_not_yet_copied(values.dtype))
    mark_pinned(destination)
    state.pending.append(PendingCopy(destination, values))
    return destination


def _not_yet_copied(dtype: torch.dtype) -> float | int | bool:
    """What an unfinished copy's destination holds: NaN, or an integer's largest value."""
    if dtype.is_floating_point or dtype.is_complex:
        return math.nan
    if dtype == torch.bool:
        return False
    return torch.iinfo(dtype).max


def _created_at(tensor: torch.Tensor) -> observe.Location | None:
    return getattr(storage_of(tensor), CREATED_TAG, None)


def _copy_(state: EmulatorState, func: Any, args: tuple, kwargs: dict) -> Any:
    destination, source = args[0], args[1]
    non_blocking = bool(args[2] if len(args) > 2 else kwargs.get("non_blocking"))
    to, here = device_of(destination), device_of(source)
    if is_unbound(destination):
        bind(destination, here)
        to = here
    elif is_unbound(source):
        bind(source, to)
        here = to
    if "cuda" in (to.type, here.type):
        state.initialize(existing=True)
    size = nbytes(source)
    if here.type == "cuda" and to.type == "cpu":
        state.recorder.transfer(observe.DEVICE_TO_HOST, size)
        if non_blocking and is_pinned(destination):
            state.pending.append(PendingCopy(destination, source.clone()))
            destination.fill_(_not_yet_copied(destination.dtype))
            return destination
        state.synchronize()
    elif here.type == "cpu" and to.type == "cuda":
        state.recorder.transfer(observe.HOST_TO_DEVICE, size, _created_at(source))
    elif here != to:
        state.recorder.transfer(observe.DEVICE_TO_DEVICE, size)
    return func(*args, **kwargs)


def _local_scalar_dense(state: EmulatorState, func: Any, args: tuple, kwargs: dict) -> Any:
    """``item()``: a blocking device-to-host copy of one element."""
    if device_of(args[0]).type == "cuda":
        state.initialize(existing=True)
        state.synchronize()
        state.recorder.transfer(observe.DEVICE_TO_HOST, args[0].element_size())
    return func(*args, **kwargs)


def _pin_memory(state: EmulatorState, func: Any, args: tuple, kwargs: dict) -> Any:
    tensor = args[0]
    if device_of(tensor).type == "cuda":
        _raise(errors.cannot_pin(legacy_type_name(tensor)))  # as an H200 said (torch 2.11)
    state.initialize()  # pinning allocates through the CUDA driver
    pinned = tensor.clone()
    mark_pinned(pinned)
    return pinned


def _is_pinned(state: EmulatorState, func: Any, args: tuple, kwargs: dict) -> bool:
    return is_pinned(args[0])


# operators with their own device rules ------------------------------------------------


def _index(state: EmulatorState, func: Any, args: tuple, kwargs: dict) -> Any:
    """``t[idx]``: indices on the CPU or on the indexed tensor's device (``index``'s
    ``check_indices_on_cpu_or_selfdevice``)."""
    indexed = device_of(args[0])
    for index in args[1]:
        if index is not None and device_of(index) not in (CPU, indexed):
            _raise(errors.indices_on_other_device(indexed))
    return _run_on(state, indexed, func, args, kwargs)


def _index_put(state: EmulatorState, func: Any, args: tuple, kwargs: dict) -> Any:
    """``t[idx] = v``: ``index_put_`` moves indices on any device to ``t``'s (``make_info``:
    "Ensure indices are on the same device as self"); the values must be there, or be a
    0-dim CPU tensor."""
    indexed = device_of(args[0])
    if len(args) > 2 and isinstance(args[2], torch.Tensor):
        values = args[2]
        device = device_of(values)
        if device != indexed and not (device.type == "cpu" and values.dim() == 0):
            _raise(errors.found_two_devices(indexed, device))
    return _run_on(state, indexed, func, args, kwargs)


def _masked_fill(state: EmulatorState, func: Any, args: tuple, kwargs: dict) -> Any:
    filled, mask = device_of(args[0]), device_of(args[1])
    if mask != filled:
        _raise(errors.mask_on_other_device(mask, filled))
    return _run_on(state, filled, func, args, kwargs)


def _embedding(state: EmulatorState, func: Any, args: tuple, kwargs: dict) -> Any:
    """``embedding`` is ``weight.index_select(0, indices)`` on CUDA; the error names that."""
    weight, indices = device_of(args[0]), device_of(args[1])
    if indices != weight:
        method = ops.info(aten.index_select.default).method
        _raise(errors.argument_on_other_device("index", indices, weight, method))
    return _run_on(state, weight, func, args, kwargs)


def _convolution(state: EmulatorState, func: Any, args: tuple, kwargs: dict) -> Any:
    source, weight = args[0], args[1]
    here = device_of(source)
    for parameter in (weight, args[2] if len(args) > 2 else None):
        if isinstance(parameter, torch.Tensor) and device_of(parameter) != here:
            _raise(
                errors.convolution_types(
                    type_string(source), type_string(parameter), mkldnn=here.type == "cpu"
                )
            )
    return _run_on(state, here, func, args, kwargs)


def _foreach(state: EmulatorState, func: Any, args: tuple, kwargs: dict) -> Any:
    """``_foreach_*``: element ``i`` of each list meets only element ``i`` of the others."""
    lists = [arg for arg in args if isinstance(arg, (list, tuple)) and arg]
    lists = [items for items in lists if isinstance(items[0], torch.Tensor)]
    if not lists:
        return func(*args, **kwargs)
    devices = [device_of(tensor) for tensor in lists[0]]
    for items in lists[1:]:
        for device, tensor in zip(devices, items, strict=False):
            other = device_of(tensor)
            if other != device and not (other.type == "cpu" and tensor.dim() == 0):
                _raise(errors.found_two_devices(device, other))
    result = func(*args, **kwargs)
    if isinstance(result, (list, tuple)):
        for device, tensor in zip(devices, result, strict=False):
            if device.type == "cuda" and isinstance(tensor, torch.Tensor):
                _place_outputs(state, tensor, device, set())
    return result


def _run_on(
    state: EmulatorState, device: torch.device, func: Any, args: tuple, kwargs: dict
) -> Any:
    if device.type == "cuda":
        state.initialize()
    result = func(*args, **kwargs)
    if device.type == "cuda":
        inputs = {id(storage_of(arg)) for arg in args if isinstance(arg, torch.Tensor)}
        _place_outputs(state, result, device, inputs)
    return result


def _pack_padded_sequence(state: EmulatorState, func: Any, args: tuple, kwargs: dict) -> Any:
    """``lengths`` must be a CPU tensor; the packed data is on the input's device and its
    ``batch_sizes`` on the CPU (``PackedSequence.cpp``)."""
    source, lengths = args[0], args[1]
    if device_of(lengths).type != "cpu":
        name = type_string(lengths).removeprefix("CUDA").removesuffix("Type")
        _raise(errors.lengths_not_on_cpu(lengths.dim(), device_of(lengths), name))
    return _first_output_on(state, device_of(source), func, args, kwargs)


def _first_output_on(
    state: EmulatorState, device: torch.device, func: Any, args: tuple, kwargs: dict
) -> Any:
    result = func(*args, **kwargs)
    if device.type == "cuda":
        state.initialize()
        inputs = {id(storage_of(arg)) for arg in args if isinstance(arg, torch.Tensor)}
        _place_outputs(state, result[0], device, inputs)
    return result


def _first_operand(state: EmulatorState, func: Any, args: tuple, kwargs: dict) -> Any:
    """Ops that take another device's operand as a plain value (``fill_``'s 0-dim value)."""
    return _run_on(state, device_of(args[0]), func, args, kwargs)


_HANDLERS: dict[Any, Handler | None] = {
    aten._to_copy: _to_copy,
    aten.copy_: _copy_,
    aten._local_scalar_dense: _local_scalar_dense,
    aten._pin_memory: _pin_memory,
    aten.is_pinned: _is_pinned,
    aten.index: _index,
    aten._unsafe_index: _index,
    aten.index_put: _index_put,
    aten.index_put_: _index_put,
    aten._index_put_impl_: _index_put,
    aten._unsafe_index_put: _index_put,
    aten.masked_fill: _masked_fill,
    aten.masked_fill_: _masked_fill,
    aten.embedding: _embedding,
    aten.convolution: _convolution,
    aten._convolution: _convolution,
    aten.fill_: _first_operand,
    aten.set_: _first_operand,
    aten._pack_padded_sequence: _pack_padded_sequence,
}


def _handler(packet: Any) -> Handler | None:
    handler = _HANDLERS.get(packet, _UNKNOWN)
    if handler is _UNKNOWN:
        handler = _foreach if packet.__name__.startswith("_foreach_") else None
        _HANDLERS[packet] = handler
    return handler


_UNKNOWN: Any = object()
