"""What the analysis remembers about local functions, classes and call arguments."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from devlint.core.binder import Env, Split
from devlint.core.syntax import calls_on_self, statements_on_self, words_in
from devlint.core.tensor_evidence import TensorParameters
from devlint.core.values import Referent, Value

if TYPE_CHECKING:
    from devlint.core.imports import ModuleScope

_NOT_HELPERS = frozenset({"__init__", "forward", "to", "cuda"})


class ClassKind(enum.Enum):
    MODULE = "module"  # an nn.Module subclass
    DATASET = "dataset"  # a torch Dataset subclass
    PLAIN = "plain"  # anything else (a Trainer, a config…)


@dataclass(eq=False)
class FunctionInfo(Referent):
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

    def takes_input(self, param: cst.Param, index: int) -> bool:
        """Whether a parameter of this module method (``index`` among those after ``self``;
        -1 for keyword-only) is a tensor input: the first of ``forward``, or any annotated
        as a tensor. Such inputs live on the module's device. What ``__init__`` is given
        (an initial value, a pretrained table) is what the module is built from, where it
        is built: no input."""
        if self.name == "__init__":
            return False
        annotation = param.annotation
        if annotation is not None:
            return any("Tensor" in word for word, _ in words_in(annotation.annotation))
        return self.name == "forward" and index == 0

    def inputs_given(
        self, args: Args, evidence: TensorParameters
    ) -> list[tuple[cst.BaseExpression, Value]]:
        """The arguments of a call to this ``forward`` that it takes as tensor inputs: those
        ``takes_input`` names, and the parameters its code shows to be tensors
        (``torch.cat([state, action])``), not the ones it uses as numbers or indices, nor
        those it places itself or reads on the host (``evidence.placed``)."""
        tensors, placed = evidence.tensors, evidence.placed
        params = [*self.node.params.posonly_params, *self.node.params.params][1:]
        named = {param.name.value: index for index, param in enumerate(params)}
        named.update({param.name.value: -1 for param in self.node.params.kwonly_params})
        kwonly = {param.name.value: param for param in self.node.params.kwonly_params}
        chosen = [
            given
            for index, given in enumerate(args.positional)
            if index < len(params)
            and params[index].name.value not in placed
            and (self.takes_input(params[index], index) or params[index].name.value in tensors)
        ]
        for name, given in args.keywords.items():
            index = named.get(name)
            param = params[index] if index is not None and index >= 0 else kwonly.get(name)
            if param is None or name in placed:
                continue
            if self.takes_input(param, index) or name in tensors:
                chosen.append(given)
        return chosen

    @cached_property
    def statements_on_self(self) -> list[tuple[cst.CSTNode, str]]:
        """``syntax.statements_on_self`` of the method, walked once however many classes
        inherit it."""
        return statements_on_self(self.node)

    @cached_property
    def calls_on_self(self) -> set[str]:
        """``syntax.calls_on_self`` of the method, walked once."""
        return calls_on_self(self.node)


@dataclass(eq=False)
class ClassInfo(Referent):
    """A class defined in the file: its kind, methods and what ``__init__`` sets on self.

    ``attrs`` are the values of ``self.<name>`` after ``__init__`` as seen from
    the other methods; ``stateful`` whether instances own parameters or buffers
    (modules); ``moves_itself`` whether ``__init__`` moves the module to a device,
    and ``placed`` the module as it leaves ``__init__`` when that device does not
    depend on the arguments (``self.to(self.device)`` with a device chosen inside);
    ``open_base`` whether a base outside the file may be an ``nn.Module`` (its
    ``.to()`` would then move what ``__init__`` registers); ``framework_base`` whether a
    base is neither ``nn.Module`` nor a class of the project (a framework's class, which
    may call its methods: Lightning's ``training_step``, a ``Dataset``'s ``__getitem__``).

    ``__init__`` is analysed when something first asks for one of these (``settle``), as
    Python runs it when the class is first instantiated: it may use names the module
    defines further down. The file's own classes nobody asked about are settled at the
    module's end; most classes of another file are never instantiated or derived from by
    the importing file.
    """

    node: cst.ClassDef
    kind: ClassKind
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    _attrs: dict[str, Value] = field(default_factory=dict)
    _stateful: bool | None = None
    _moves_itself: bool = False
    _placed: Value | None = None
    _flag_splits: dict[str, Split] = field(default_factory=dict)
    open_base: bool = False
    framework_base: bool = False  # a base other than nn.Module and the project's classes
    base_stateful: bool | None = False  # whether its bases own state (None: one may)
    settle: Callable[[], None] | None = field(default=None, repr=False)
    built_by: set[str] = field(default_factory=set)  # construction helpers ``__init__`` ran
    _builders: dict[str, bool] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return self.node.name.value

    def builds_with(self, name: str) -> bool:
        """Whether ``self.<name>()`` in ``__init__`` is a construction helper (``get_data``,
        ``_build``, a dummy forward pass sizing a layer): a method no other method calls. It
        runs on the module being built, and what it sets is what ``__init__`` leaves."""
        found = self._builders.get(name)
        if found is None:
            method = self.methods.get(name)
            found = (
                name not in _NOT_HELPERS
                and method is not None
                and not any(
                    name in other.calls_on_self
                    for key, other in self.methods.items()
                    if key != "__init__"
                )
            )
            self._builders[name] = found
        return found

    def settle_now(self) -> None:
        """Analyse ``__init__`` now if nothing has asked for what it sets yet."""
        if self.settle is not None:
            settle, self.settle = self.settle, None  # what it reads of this class: as it is
            settle()

    @property
    def attrs(self) -> dict[str, Value]:
        self.settle_now()
        return self._attrs

    @attrs.setter
    def attrs(self, attrs: dict[str, Value]) -> None:
        self._attrs = attrs

    @property
    def stateful(self) -> bool | None:
        self.settle_now()
        return self._stateful

    @stateful.setter
    def stateful(self, stateful: bool | None) -> None:
        self._stateful = stateful

    @property
    def moves_itself(self) -> bool:
        self.settle_now()
        return self._moves_itself

    @moves_itself.setter
    def moves_itself(self, moves: bool) -> None:
        self._moves_itself = moves

    @property
    def placed(self) -> Value | None:
        self.settle_now()
        return self._placed

    @placed.setter
    def placed(self, placed: Value | None) -> None:
        self._placed = placed

    @property
    def flag_splits(self) -> dict[str, Split]:
        """Attributes ``__init__`` set differently on the two sides of a flag of self that no
        other method rebinds (``if self.dp: self.net = DataParallel(self.net)``), as the
        other methods see each side: a method testing the flag again takes its side."""
        self.settle_now()
        return self._flag_splits

    @flag_splits.setter
    def flag_splits(self, splits: dict[str, Split]) -> None:
        self._flag_splits = splits


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
class WrapperInfo(Referent):
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
