"""``nn.DataParallel`` over the virtual GPUs: the collectives of ``torch.nn.parallel.comm``.

DataParallel's own Python code does the rest as it does on CUDA: it checks
that the parameters live on ``device_ids[0]``, scatters the inputs, replicates
the module, runs the replicas in threads and gathers the outputs, and its
``state_dict()`` keys start with ``module.``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch.nn.parallel import _functions, comm

from devlint.harness.emulator.devices import CPU, device_of
from devlint.harness.emulator.patches import Patches
from devlint.harness.emulator.state import EmulatorState


def install(patches: Patches, state: EmulatorState) -> None:
    def gpu(index: Any) -> torch.device:
        if isinstance(index, torch.device):
            return index if index.index is not None else state.cuda()
        return state.cuda(None if index is None else int(index))

    def scatter(
        tensor: torch.Tensor,
        devices: Sequence[Any] | None = None,
        chunk_sizes: Sequence[int] | None = None,
        dim: int = 0,
        streams: Any = None,
        *,
        out: Any = None,
    ) -> tuple[torch.Tensor, ...]:
        targets = [gpu(device) for device in devices or range(state.gpus)]
        if chunk_sizes is None:
            chunks = tensor.chunk(len(targets), dim)
        else:
            chunks = tensor.split(list(chunk_sizes), dim)
        return tuple(chunk.to(target) for chunk, target in zip(chunks, targets, strict=False))

    def gather(
        tensors: Sequence[torch.Tensor], dim: int = 0, destination: Any = None, *, out: Any = None
    ) -> torch.Tensor:
        target = CPU if destination in (-1, "cpu") else gpu(destination)
        return torch.cat([tensor.to(target) for tensor in tensors], dim)

    def broadcast(tensor: torch.Tensor, devices: Sequence[Any] | None = None, *, out: Any = None):
        return tuple(_copy_to(tensor, gpu(device)) for device in devices or ())

    def broadcast_coalesced(
        tensors: Sequence[torch.Tensor], devices: Sequence[Any], buffer_size: int = 0
    ) -> list[list[torch.Tensor]]:
        return [[_copy_to(tensor, gpu(device)) for tensor in tensors] for device in devices]

    def reduce_add(inputs: Sequence[torch.Tensor], destination: Any = None) -> torch.Tensor:
        target = gpu(destination)
        total = inputs[0].to(target, copy=True)
        for tensor in inputs[1:]:
            total = total + tensor.to(target)
        return total

    def reduce_add_coalesced(
        inputs: Sequence[Sequence[torch.Tensor]], destination: Any = None, buffer_size: int = 0
    ) -> list[torch.Tensor]:
        return [reduce_add(list(group), destination) for group in zip(*inputs, strict=True)]

    for name, value in {
        "scatter": scatter,
        "gather": gather,
        "broadcast": broadcast,
        "broadcast_coalesced": broadcast_coalesced,
        "reduce_add": reduce_add,
        "reduce_add_coalesced": reduce_add_coalesced,
    }.items():
        patches.set(comm, name, value)
    patches.set(_functions, "_get_stream", lambda device: torch.cuda.current_stream(device))


def _copy_to(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    """The source device keeps the tensor itself, as CUDA's broadcast does."""
    return tensor if device_of(tensor) == device else tensor.to(device)
