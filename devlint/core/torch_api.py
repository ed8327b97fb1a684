"""The torch API table: what each torch call does with devices.

The data lives in ``torch_api.json`` next to this module, generated from an installed torch
by ``scripts/generate_torch_api.py``. Reading it needs no torch. What devlint knows of
torch beyond it is written by hand in ``torch_facts``.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from devlint.core.torch_facts import AUDIO_TRANSFORMS_WITH_BUFFERS


class CallKind(enum.Enum):
    """What a call does with devices."""

    FACTORY = "factory"  # creates a tensor; device= (default CPU)
    LIKE = "like"  # tensor from a tensor: same device unless device= is given
    COMBINE = "combine"  # two or more tensor inputs that must share a device
    INHERIT = "inherit"  # result on the device of its (one) tensor input
    NON_TENSOR = "non_tensor"  # returns a Python value or another non-tensor


@dataclass(frozen=True)
class CallSpec:
    """How a torch function or tensor method treats devices."""

    kind: CallKind
    tensor_params: tuple[str, ...] = ()  # tensor-typed parameters in order (a method: not self)
    sequence_param: str | None = None  # the Tensor[] parameter (cat/stack: "tensors")
    strict: bool = False  # a CPU 0-dim tensor is not accepted next to a CUDA tensor
    reduces: bool = False  # the result is 0-dim when called without a dim argument
    size_params: bool = False  # FACTORY: takes a size, so ndim >= 1 unless the size is ()


@dataclass(frozen=True)
class ModuleSpec:
    """A torch.nn module class."""

    stateful: bool | None  # owns parameters or buffers by default (None: unknown)
    loss: bool


@dataclass(frozen=True)
class _Table:
    version: str
    functions: dict[str, CallSpec]
    methods: dict[str, CallSpec]
    modules: dict[str, ModuleSpec]
    optimizers: frozenset[str]
    transfers: frozenset[str]
    wrapper_attributes: frozenset[str]


def _call_spec(data: dict[str, Any]) -> CallSpec:
    return CallSpec(
        kind=CallKind(data["kind"]),
        tensor_params=tuple(data.get("tensor_params", ())),
        sequence_param=data.get("sequence_param"),
        strict=bool(data.get("strict", False)),
        reduces=bool(data.get("reduces", False)),
        size_params=bool(data.get("size_params", False)),
    )


@cache
def _table() -> _Table:
    text = resources.files(__package__).joinpath("torch_api.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return _Table(
        version=data["torch_version"],
        functions={name: _call_spec(spec) for name, spec in data["functions"].items()},
        methods={name: _call_spec(spec) for name, spec in data["methods"].items()},
        modules={
            name: ModuleSpec(spec["stateful"], spec["loss"])
            for name, spec in data["modules"].items()
        },
        optimizers=frozenset(data["optimizers"]),
        transfers=frozenset(data["transfers"]),
        wrapper_attributes=frozenset(data["wrapper_attributes"]),
    )


def torch_function(qualname: str) -> CallSpec | None:
    """The spec of a torch function: "torch.add", "torch.nn.functional.linear", "torch.fft.fft"."""
    return _table().functions.get(qualname)


def tensor_method(name: str) -> CallSpec | None:
    """The spec of a torch.Tensor method by name ("add_", "masked_fill", "sum")."""
    return _table().methods.get(name)


def nn_module(qualname: str) -> ModuleSpec | None:
    """The spec of a torch.nn module class: "torch.nn.Linear"."""
    modules = _table().modules
    spec = modules.get(qualname)
    if spec is None and qualname.startswith("torch.nn.modules."):
        spec = modules.get("torch.nn." + qualname.rsplit(".", 1)[-1])
    if spec is None and qualname in AUDIO_TRANSFORMS_WITH_BUFFERS:
        spec = ModuleSpec(stateful=True, loss=False)
    return spec


def is_loss(qualname: str) -> bool:
    """Whether the qualified name is a torch.nn loss class ("torch.nn.CrossEntropyLoss")."""
    spec = nn_module(qualname)
    return spec is not None and spec.loss


def is_optimizer(qualname: str) -> bool:
    """Whether the qualified name is a torch.optim optimizer class ("torch.optim.Adam")."""
    return qualname in _table().optimizers


def is_wrapper_attribute(name: str) -> bool:
    """Whether DataParallel/DDP itself has ``name`` (``state_dict``, ``module``, ``no_sync``)."""
    return name in _table().wrapper_attributes


_DEVICES_MOVED_TO_BY_NAME = frozenset({"cpu", "cuda"})
"""The device types whose own transfer method (``.cpu()``, ``.cuda()``) the analysis follows
as a move. The table's ``.xpu()``, ``.ipu()`` and ``.mtia()`` move to devices it does not
follow: they stay calls of unknown result."""


@cache
def moves() -> frozenset[str]:
    """The transfers the analysis follows as moves of their receiver: ``.to()``, to the
    device, dtype or tensor it is given, and the moves named after their device
    (``device_named_moves``). The table's other transfers are no moves here: ``copy_``
    and ``set_`` change the receiver in place, ``type`` converts a dtype and names a device
    only through a typed tensor class (``torch_model.type_conversion``), and ``Calls``
    follows ``type_as`` of a tensor as ``.to()``."""
    return _table().transfers & ({"to"} | _DEVICES_MOVED_TO_BY_NAME)


@cache
def device_named_moves() -> frozenset[str]:
    """``.cpu()`` and ``.cuda()``: the moves that always send their receiver to a device,
    where ``.to()`` may convert a dtype instead."""
    return _table().transfers & _DEVICES_MOVED_TO_BY_NAME


def torch_version() -> str:
    """The torch version the table was generated from."""
    return _table().version
