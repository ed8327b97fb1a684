"""The emulated machine: how many GPUs, which is current, what is allocated, what is in flight."""

from __future__ import annotations

import os
import threading
import weakref
from dataclasses import dataclass, field

import torch

from devlint.harness.emulator import errors
from devlint.harness.observe import Recorder

FORKED_AFTER_INIT = (
    "Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, "
    "you must use the 'spawn' start method"
)
NO_GPUS = "No CUDA GPUs are available"


@dataclass
class PendingCopy:
    """A non-blocking device-to-host copy the host has not waited for yet."""

    destination: torch.Tensor
    values: torch.Tensor


@dataclass
class EmulatorState:
    gpus: int
    recorder: Recorder = field(default_factory=Recorder)
    initialized_in: int | None = None
    """The pid that initialised CUDA."""
    poisoned_in: int | None = None
    """The pid that initialised CUDA or asked the CUDA runtime for its devices: a fork of it may
    not use CUDA again (PyTorch's "poison fork")."""
    bad_fork: bool = False
    pending: list[PendingCopy] = field(default_factory=list)
    allocated: list[int] = field(default_factory=list)
    peak: list[int] = field(default_factory=list)
    _local: threading.local = field(default_factory=threading.local)

    def __post_init__(self) -> None:
        self.allocated = [0] * self.gpus
        self.peak = [0] * self.gpus

    # current device (per thread, as in CUDA) -----------------------------------

    @property
    def current(self) -> int:
        return getattr(self._local, "device", 0)

    @current.setter
    def current(self, index: int) -> None:
        self._local.device = index

    def cuda(self, index: int | None = None) -> torch.device:
        """``cuda:index``, the current device when no index is given."""
        return torch.device("cuda", self.current if index is None else index)

    # initialisation and fork ----------------------------------------------------

    def initialize(self, *, existing: bool = False) -> None:
        """What touching CUDA does: fail in a bad fork or without GPUs, else remember the pid.

        ``existing``: the work reads device memory the process already has. In a bad fork that
        fails in the CUDA runtime, not in PyTorch's lazy initialisation.
        """
        if self.bad_fork:
            raise errors.forked_device_memory() if existing else RuntimeError(FORKED_AFTER_INIT)
        if self.gpus == 0:
            raise RuntimeError(NO_GPUS)
        if self.initialized_in is None:
            self.initialized_in = os.getpid()
        self.poison_fork()

    def poison_fork(self) -> None:
        """What ``cudaGetDeviceCount`` does (``torch.cuda.is_available()`` without the NVML
        check): the driver is initialised, so a forked child cannot use CUDA."""
        if self.poisoned_in is None:
            self.poisoned_in = os.getpid()

    @property
    def initialized(self) -> bool:
        return self.initialized_in is not None and not self.bad_fork

    def after_fork_in_child(self) -> None:
        if self.poisoned_in is not None:
            self.bad_fork = True
        self.pending.clear()

    # memory ---------------------------------------------------------------------

    def allocate(self, storage: torch.UntypedStorage, index: int) -> None:
        size = storage.nbytes()
        self.allocated[index] += size
        self.peak[index] = max(self.peak[index], self.allocated[index])
        weakref.finalize(storage, self._free, index, size)

    def _free(self, index: int, size: int) -> None:
        self.allocated[index] -= size

    # streams ----------------------------------------------------------------------

    def synchronize(self) -> None:
        """The host waits for the device: every pending copy lands."""
        pending, self.pending = self.pending, []
        for copy in pending:
            copy.destination.copy_(copy.values)
