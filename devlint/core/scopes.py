"""What the analysis remembers about local functions, classes and call arguments."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from devlint.core.binder import Env
from devlint.core.tensor_evidence import TensorParameters
from devlint.core.values import Value

if TYPE_CHECKING:
    from devlint.core.imports import ModuleScope


class ClassKind(enum.Enum):
    MODULE = "module"  # an nn.Module subclass
    DATASET = "dataset"  # a torch Dataset subclass
    PLAIN = "plain"  # anything else (a Trainer, a config…)


@dataclass(eq=False)
class FunctionInfo:
    """A function or method defined in the file, with the scope it closes over."""

    node: cst.FunctionDef
    closure: Env
    owner: ClassInfo | None = None
    tensor_params: TensorParameters | None = None  # the parameters its code shows to be tensors
    passed: set[str] = field(default_factory=set)  # parameters callers here gave known values
    home: ModuleScope | None = None  # the file that defines it, when not the one analysed

    @property
    def name(self) -> str:
        return self.node.name.value


@dataclass(eq=False)
class ClassInfo:
    """A class defined in the file: its kind, methods and what ``__init__`` sets on self.

    ``attrs`` are the values of ``self.<name>`` after ``__init__`` as seen from
    the other methods; ``stateful`` whether instances own parameters or buffers
    (modules); ``moves_itself`` whether ``__init__`` moves the module to a device;
    ``open_base`` whether a base outside the file may be an ``nn.Module`` (its
    ``.to()`` would then move what ``__init__`` registers).
    """

    node: cst.ClassDef
    kind: ClassKind
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    attrs: dict[str, Value] = field(default_factory=dict)
    stateful: bool | None = None
    moves_itself: bool = False
    open_base: bool = False

    @property
    def name(self) -> str:
        return self.node.name.value


@dataclass(frozen=True, eq=False)
class Args:
    """Evaluated call arguments: positional in order, keywords by name."""

    positional: tuple[tuple[cst.BaseExpression, Value], ...]
    keywords: dict[str, tuple[cst.BaseExpression, Value]]
    starred: bool = False
    unpacked: tuple[tuple[str, cst.BaseExpression, Value], ...] = ()  # `*xs`, `**batch`

    def get(
        self, position: int, keyword: str | None = None
    ) -> tuple[cst.BaseExpression, Value] | None:
        """The argument at ``position`` or named ``keyword``, if given."""
        if keyword is not None and keyword in self.keywords:
            return self.keywords[keyword]
        if 0 <= position < len(self.positional):
            return self.positional[position]
        return None

    def all(self) -> list[tuple[cst.BaseExpression, Value]]:
        return [*self.positional, *self.keywords.values()]


@dataclass(frozen=True, eq=False)
class WrapperInfo:
    """What ``nn.DataParallel(...)`` / ``DistributedDataParallel(...)`` was given.

    ``device_ids`` and ``output_device`` are the arguments (expression, value),
    None when not given; ``conditional`` is set when only some paths wrap
    (``if torch.cuda.device_count() > 1: model = nn.DataParallel(model)``).
    """

    kind: str  # "DataParallel" or "DistributedDataParallel"
    node: cst.Call
    inner: Value
    device_ids: tuple[tuple[cst.BaseExpression, Value], ...] | None
    output_device: tuple[cst.BaseExpression, Value] | None
    conditional: bool = False

    @property
    def distributed(self) -> bool:
        return self.kind == "DistributedDataParallel"
