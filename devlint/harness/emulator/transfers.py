"""Transfers the program asked for by name (``.to()``, ``.cuda()``, ``.cpu()``, ``device=``).

On this CPU build every tensor's C++ device is ``cpu``, so a ``_to_copy`` that
C++ issues with ``device=cpu`` may be a dtype change on a virtual GPU. The
Python-level methods say what was really asked for while their copy runs.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch

_local = threading.local()


@dataclass(frozen=True)
class Transfer:
    device: torch.device
    fresh: bool = False
    """The source was made for this copy (``torch.tensor(..., device=)``): not create-then-move."""


@contextmanager
def transfer_to(device: torch.device, fresh: bool = False) -> Iterator[None]:
    previous = getattr(_local, "transfer", None)
    _local.transfer = Transfer(device, fresh)
    try:
        yield
    finally:
        _local.transfer = previous


def explicit_target() -> Transfer | None:
    return getattr(_local, "transfer", None)
