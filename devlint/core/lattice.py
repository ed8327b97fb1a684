"""Where a value lives: the device lattice, its join, and when two devices conflict.

Bottom (no value yet) < concrete devices and symbols < Unknown. The one
exception to "different values join to Unknown" is the accelerator idiom:
under a ``torch.cuda.is_available()``-style guard, cpu joined with an
accelerator is ``MAYBE_ACCEL`` ("the accelerator when there is one"), the
same value ``torch.device("cuda" if torch.cuda.is_available() else "cpu")``
denotes, so code placed either way stays consistent with itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from devlint.diagnostic import Severity


class Device:
    """Base of every abstract device."""

    __slots__ = ()

    def describe(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Concrete(Device):
    """A known device type with an optional index: cpu, cuda, cuda:1, mps, meta."""

    type: str
    index: int | None = None

    def describe(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


@dataclass(frozen=True, slots=True)
class Symbol(Device):
    """The run-time value of a device we cannot see: ``args.device``, a parameter.

    ``accel`` says whether it can be an accelerator as far as we know: true for
    device variables (``device``, ``args.device``), false for an opaque device
    that only equals itself. ``tensor`` marks the device of a tensor parameter
    (named ``x.device``), which the caller chooses: the same symbol as the
    ``x.device`` the code reads, only described after the tensor. ``gpu`` marks the index
    of a CUDA GPU (``x.cuda(rank)``), which an availability guard joins as it joins ``cuda``.
    """

    name: str
    accel: bool = True
    tensor: bool = field(default=False, compare=False)
    gpu: bool = field(default=False, compare=False)
    """The index of a CUDA GPU (``x.cuda(rank)``): an accelerator whatever its value."""

    @property
    def holder(self) -> str:
        """The tensor whose device this is (``x`` for ``x.device``)."""
        return self.name.removesuffix(".device")

    def describe(self) -> str:
        if self.tensor:
            return f"the device of `{self.holder}`"
        return self.name if self.name.startswith("the ") else f"`{self.name}`"


@dataclass(frozen=True, slots=True)
class _Special(Device):
    label: str

    def describe(self) -> str:
        return self.label


BOTTOM = _Special("nothing")
UNKNOWN = _Special("unknown")
MAYBE_ACCEL = _Special("cuda when available")
CPU = Concrete("cpu")
MODULE_DEVICE = Symbol("the module's device")  # inside an nn.Module: its parameters and inputs


def _in_accel_group(device: Device) -> bool:
    """cpu, an accelerator and MAYBE_ACCEL: what an availability guard joins (any index:
    ``cuda:0`` and ``cuda:1`` join into ``cuda``, which must then join as they do)."""
    if device is MAYBE_ACCEL or device == CPU:
        return True
    if isinstance(device, Symbol):
        return device.gpu
    return isinstance(device, Concrete) and device.type not in ("cpu", "meta")


def join(a: Device, b: Device, *, guarded: bool = False) -> Device:
    """Least upper bound; ``guarded`` when the merge point is an accelerator check."""
    if a == b:
        if isinstance(a, Symbol) and isinstance(b, Symbol) and a.gpu != b.gpu:
            return replace(a, gpu=False)  # known to be a GPU on one path only
        return a
    if a is BOTTOM:
        return b
    if b is BOTTOM:
        return a
    if isinstance(a, Concrete) and isinstance(b, Concrete) and a.type == b.type:
        return Concrete(a.type)  # `cuda:0` or `cuda:1`: a GPU, which one is not known
    if _is_gpu(a) and _is_gpu(b):
        return Concrete("cuda")  # `cuda:<rank>` or `cuda:0`
    if guarded and _in_accel_group(a) and _in_accel_group(b):
        return MAYBE_ACCEL
    return UNKNOWN


def _is_gpu(device: Device) -> bool:
    if isinstance(device, Symbol):
        return device.gpu
    return isinstance(device, Concrete) and device.type == "cuda"


def is_known(device: Device) -> bool:
    return device is not UNKNOWN and device is not BOTTOM


def is_placed(device: Device) -> bool:
    """A module instance's device that is known and not the opaque "module's device": where
    a caller placed it."""
    return is_known(device) and device != MODULE_DEVICE


def can_be_accelerator(device: Device) -> bool:
    """True for concrete accelerators, MAYBE_ACCEL and device-variable symbols."""
    if isinstance(device, Concrete):
        return device.type not in ("cpu", "meta")
    if isinstance(device, Symbol):
        return device.accel
    return device is MAYBE_ACCEL


def conflict(a: Device, b: Device) -> Severity | None:
    """How sure we are that tensors on ``a`` and ``b`` cannot meet in one op.

    ERROR: two known, different devices. WARNING: a definite cpu against
    something that can be an accelerator, or a hard-coded accelerator against a
    device chosen at run time (a symbol), which may be the cpu or another GPU.
    None: compatible or unknown.
    """
    if not (is_known(a) and is_known(b)) or a == b:
        return None
    if isinstance(a, Concrete) and isinstance(b, Concrete):
        if "meta" in (a.type, b.type):
            return None
        if a.type != b.type:
            return Severity.ERROR
        if a.index is not None and b.index is not None and a.index != b.index:
            return Severity.ERROR
        return None
    if (a == CPU and can_be_accelerator(b)) or (b == CPU and can_be_accelerator(a)):
        return Severity.WARNING
    if _hard_coded_against_symbol(a, b) or _hard_coded_against_symbol(b, a):
        return Severity.WARNING
    return None


def is_hard_coded_accelerator(device: Device) -> bool:
    """A literal accelerator (``.cuda()``, ``device="cuda"``), not one chosen at run time."""
    return isinstance(device, Concrete) and device.type not in ("cpu", "meta")


def _hard_coded_against_symbol(a: Device, b: Device) -> bool:
    return is_hard_coded_accelerator(a) and isinstance(b, Symbol) and b.accel
