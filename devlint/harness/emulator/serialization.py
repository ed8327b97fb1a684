"""``torch.save`` / ``torch.load`` of tensors on virtual GPUs, through PyTorch's location registry.

A checkpoint saved from ``cuda:0`` records the location ``cuda:0`` exactly as a
CUDA build writes it, so loading it where no GPU is visible fails with
PyTorch's own message, and ``map_location`` decides where it lands.
"""

from __future__ import annotations

import re
from typing import Any

import torch
from torch import serialization

from devlint.harness import observe
from devlint.harness.emulator.devices import DEVICE_TAG, storage_device
from devlint.harness.emulator.patches import Patches
from devlint.harness.emulator.state import EmulatorState

PRIORITY = 9
"""Before PyTorch's CPU (10) and CUDA (20) entries."""


def install(patches: Patches, state: EmulatorState) -> None:
    def tagger(storage: Any) -> str | None:
        device = storage_device(storage)
        return None if device is None else str(device)

    def deserializer(storage: Any, location: str) -> Any:
        if not re.match(r"cuda(:|$)", location):
            return None
        device = serialization._validate_device(location, "cuda")  # PyTorch's own errors
        state.initialize()
        untyped = getattr(storage, "_untyped_storage", storage)
        setattr(untyped, DEVICE_TAG, torch.device("cuda", device.index or 0))
        state.allocate(untyped, device.index or 0)
        state.recorder.transfer(observe.HOST_TO_DEVICE, untyped.nbytes())
        return storage

    entry = (PRIORITY, tagger, deserializer)
    registry = serialization._package_registry
    registry.append(entry)
    registry.sort(key=lambda item: item[0])
    patches.defer(lambda: registry.remove(entry))
