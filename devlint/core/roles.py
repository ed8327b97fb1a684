"""What each part of the interpreter offers the others, as protocols.

An interpreter's parts call one another: a statement evaluates expressions, an
expression holds a call, a call runs a function body, which is statements again.
Each part module names the parts it calls by these protocols, never by their
classes, so the modules import downwards only (parts -> roles -> domain);
``core/analysis.py`` builds the parts and connects each to the ones it calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import libcst as cst

from devlint.core.binder import Env, Narrowing
from devlint.core.events import Operand
from devlint.core.lattice import Device
from devlint.core.scopes import Args, ClassInfo, FunctionInfo
from devlint.core.tensor_evidence import TensorParameters
from devlint.core.values import Value


@dataclass
class Frame:
    """What a running function collects: returned values and the paths that leave it."""

    function: cst.FunctionDef
    returns: list[Value] = field(default_factory=list)
    exits: list[Env] = field(default_factory=list)
    yields: list[Value] = field(default_factory=list)


class EvaluatesExpressions(Protocol):
    """``core/expressions.py``: values of expressions, and the meetings they record."""

    def eval(self, node: cst.BaseExpression, env: Env) -> Value: ...

    def meet(
        self, node: cst.CSTNode, operation: str, operands: list[Operand], strict: bool
    ) -> None: ...

    def read(self, node: cst.CSTNode, value: Value) -> None: ...

    def attribute_of(self, base: Value, name: str, node: cst.Attribute) -> Value: ...

    def operate(
        self,
        node: cst.CSTNode,
        operation: str,
        left: Value,
        left_node: cst.CSTNode,
        right: Value,
        right_node: cst.CSTNode,
        strict: bool,
    ) -> Value: ...

    def advanced_index(
        self,
        node: cst.CSTNode,
        base_node: cst.BaseExpression,
        base: Value,
        elements: Sequence[cst.SubscriptElement],
        keys: list[Value],
        *,
        reading: bool = True,
    ) -> Operand | None: ...


class InterpretsCalls(Protocol):
    """``core/calls.py``: what calls do to devices."""

    def call(self, node: cst.Call, env: Env) -> Value: ...

    def builtin(self, name: str) -> Value | None: ...

    def namespace(self, qualname: str) -> Value: ...

    def rebind(self, node: cst.BaseExpression, value: Value, env: Env) -> None: ...

    def device_argument(self, node: cst.BaseExpression, value: Value) -> Device | None: ...


class TracksWrappers(Protocol):
    """``core/wrappers.py``: DataParallel and DistributedDataParallel wrappers."""

    def wrap(self, qualname: str, node: cst.Call, args: Args) -> Value: ...

    def wrapper_attribute(self, wrapper: Value, name: str, node: cst.Attribute) -> Value: ...

    def wrapper_call(self, node: cst.Call, wrapper: Value, args: Args) -> Value: ...

    def wrapper_state_dict(self, node: cst.Call, receiver_node: cst.BaseExpression) -> Value: ...

    def note_checkpoint(self, qualname: str, node: cst.Call, args: Args) -> None: ...

    def note_state_dict_load(
        self, node: cst.Call, module_node: cst.BaseExpression, module: Value
    ) -> None: ...


class RunsStatements(Protocol):
    """``core/flow.py``: statements, control flow and the frames of running functions."""

    @property
    def function(self) -> cst.FunctionDef | None: ...

    def running(self) -> list[cst.FunctionDef]: ...

    def bind(
        self,
        target: cst.BaseExpression,
        value: Value,
        env: Env,
        source: cst.BaseExpression | None = None,
    ) -> None: ...

    def narrowed_for(self, test: cst.BaseExpression, env: Env, holds: bool) -> list[Narrowing]: ...

    def note_yield(self, value: Value) -> None: ...

    def block(self, statements: Sequence[cst.BaseStatement], env: Env | None) -> Env | None: ...

    def run_body(self, function: cst.FunctionDef, env: Env) -> Frame: ...


class RunsFunctions(Protocol):
    """``core/functions.py``: the file's functions, run for the arguments they are given."""

    def function_def(self, statement: cst.FunctionDef, env: Env) -> Env: ...

    def call_function(self, info: FunctionInfo, args: Args, receiver: Value | None) -> Value: ...

    def call_in_place(
        self, info: FunctionInfo, args: Args, receiver: cst.BaseExpression, env: Env
    ) -> Value: ...

    def can_enter(self, info: FunctionInfo) -> bool: ...

    def tensor_evidence(self, info: FunctionInfo) -> TensorParameters: ...

    def defer(self, info: FunctionInfo) -> None: ...

    def run_function(self, info: FunctionInfo, env: Env) -> Frame: ...

    def mark_analysed(self, info: FunctionInfo) -> bool: ...

    def bind_parameters(
        self, info: FunctionInfo, args: Args | None, receiver: Value | None
    ) -> Env: ...


class RunsClasses(Protocol):
    """``core/classes.py``: the file's classes, their instances and what they hold."""

    def class_def(self, statement: cst.ClassDef, env: Env) -> Env: ...

    def instantiate(self, info: ClassInfo, node: cst.Call, args: Args) -> Value: ...

    def placed_instance(self, module: Value) -> Value: ...
