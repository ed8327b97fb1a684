"""What the emulator needs to know about an ATen operator, read from PyTorch itself.

The schema names each tensor argument (as the generated device check names it).
TensorIterator checks the devices (and lets one CPU 0-dim tensor in) where the
``pointwise`` tag says so, or where ``native_functions.yaml`` turns the
generated check off (``device_check: NoCheck``: a composite such as
``binary_cross_entropy_with_logits`` leaves the check to the pointwise ops it
runs). The yaml also says whether the kernel is structured, which decides the
name of the generated wrapper an error cites.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import torch


@dataclass(frozen=True)
class OpInfo:
    name: str
    overload: str
    arguments: tuple[str, ...]
    pointwise: bool
    """TensorIterator checks the devices, not a generated check of every argument."""

    @property
    def method(self) -> str:
        """The generated CUDA wrapper an error names: ``wrapper_CUDA__index_select``."""
        if _key(self.name, self.overload) in _native_functions().structured:
            return f"wrapper_CUDA_{self.name}"
        overload = "" if self.overload == "default" else self.overload
        return f"wrapper_CUDA_{overload}_{self.name}"


_INFOS: dict[object, OpInfo] = {}


def info(func: torch._ops.OpOverload) -> OpInfo:
    found = _INFOS.get(func)
    if found is None:
        schema = func._schema
        found = OpInfo(
            name=func._overloadpacket.__name__,
            overload=func._overloadname,
            arguments=tuple(argument.name for argument in schema.arguments),
            pointwise=(
                torch.Tag.pointwise in func.tags
                or _key(func._overloadpacket.__name__, func._overloadname)
                in _native_functions().unchecked
            ),
        )
        _INFOS[func] = found
    return found


def named_tensors(
    op: OpInfo, args: tuple[object, ...], kwargs: dict[str, object]
) -> Iterator[tuple[str, torch.Tensor]]:
    """Each tensor argument with its schema name, in schema order (lists flattened)."""
    for position, value in enumerate(args):
        name = op.arguments[position] if position < len(op.arguments) else f"arg{position}"
        yield from _tensors_in(name, value)
    for name, value in kwargs.items():
        yield from _tensors_in(name, value)


def _tensors_in(name: str, value: object) -> Iterator[tuple[str, torch.Tensor]]:
    if isinstance(value, torch.Tensor):
        yield name, value
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, torch.Tensor):
                yield name, item


@dataclass(frozen=True)
class _NativeFunctions:
    structured: frozenset[str]
    """``name.overload`` of every structured kernel."""
    unchecked: frozenset[str]
    """``name.overload`` of every operator without the generated device check."""


@cache
def _native_functions() -> _NativeFunctions:
    """What torchgen's packaged ``native_functions.yaml`` says of each operator."""
    structured: set[str] = set()
    unchecked: set[str] = set()
    spec = importlib.util.find_spec("torchgen")
    if spec is not None and spec.submodule_search_locations:
        yaml = Path(next(iter(spec.submodule_search_locations))) / "packaged/ATen/native"
        path = yaml / "native_functions.yaml"
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        for entry in text.split("\n- func: ")[1:]:
            match = re.match(r"([\w.]+)\(", entry)
            if match is None:
                continue
            if re.search(r"^\s+(structured: True|structured_delegate:)", entry, re.M):
                structured.add(match.group(1))
            if re.search(r"^\s+device_check: NoCheck", entry, re.M):
                unchecked.add(match.group(1))
    return _NativeFunctions(frozenset(structured), frozenset(unchecked))


def _key(name: str, overload: str) -> str:
    return name if overload == "default" else f"{name}.{overload}"
