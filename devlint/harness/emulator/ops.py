"""What the emulator needs to know about an ATen operator, read from PyTorch itself.

The schema names each tensor argument (as the generated device check names it),
the ``pointwise`` tag says TensorIterator checks the devices (and lets one CPU
0-dim tensor in), and ``native_functions.yaml`` says whether the kernel is
structured, which decides the name of the generated wrapper an error cites.
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

    @property
    def method(self) -> str:
        """The generated CUDA wrapper an error names: ``wrapper_CUDA__index_select``."""
        if _structured(self.name, self.overload):
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
            pointwise=torch.Tag.pointwise in func.tags,
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


@cache
def _structured_ops() -> frozenset[str]:
    """``name.overload`` of every structured kernel, from torchgen's packaged yaml."""
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    yaml = Path(next(iter(spec.submodule_search_locations))) / "packaged/ATen/native"
    path = yaml / "native_functions.yaml"
    if not path.is_file():
        return frozenset()
    structured = set()
    for entry in path.read_text(encoding="utf-8").split("\n- func: ")[1:]:
        match = re.match(r"([\w.]+)\(", entry)
        if match and re.search(r"^\s+(structured: True|structured_delegate:)", entry, re.M):
            structured.add(match.group(1))
    return frozenset(structured)


def _structured(name: str, overload: str) -> bool:
    key = name if overload == "default" else f"{name}.{overload}"
    return key in _structured_ops()
