"""The per-file pass: statements, control flow, functions and classes.

One abstract interpretation over the LibCST tree. Branches join, loops run
to a fixpoint, functions defined in the file are analysed once on their own
(parameters unknown) and again for each distinct set of argument values they
are called with, so a helper ``to_device(batch, device)`` moves what it is
given and a ``train(model, loader)`` sees the caller's model and loader.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from devlint.config import Settings
from devlint.core import torch_api
from devlint.core.binder import Env, join_envs
from devlint.core.calls import BUFFER, CALL_RESULT, MOVES, PARAMETER, CallEvaluator
from devlint.core.events import (
    DiscardedTransfer,
    Facts,
    ModuleCall,
    Operand,
    OperandsMeet,
)
from devlint.core.expressions import is_tensor_like
from devlint.core.lattice import CPU, UNKNOWN, Symbol, is_known
from devlint.core.scopes import Args, ClassInfo, ClassKind, FunctionInfo
from devlint.core.syntax import dotted_name, is_device_name, is_loader_name, mentions_accelerator
from devlint.core.values import (
    NONE_VALUE,
    SCALAR_VALUE,
    UNKNOWN_VALUE,
    Kind,
    Origin,
    Value,
    accelerator_inside,
    element_of,
    join_all,
    join_values,
)

MAX_CALL_DEPTH = 4
MAX_LOOP_PASSES = 4
_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
_DATASET_BASES = frozenset({
    "torch.utils.data.Dataset", "torch.utils.data.IterableDataset",
    "torch.utils.data.dataset.Dataset",
})
_DTYPES = frozenset(
    f"torch.{name}" for name in (
        "float", "float16", "float32", "float64", "half", "double", "bfloat16", "int",
        "int8", "int16", "int32", "int64", "long", "short", "uint8", "bool", "complex64",
        "complex128", "cfloat", "cdouble",
    )
)


def analyse(module: cst.Module, settings: Settings) -> Facts:
    """Analyse one parsed file; the facts are shared by every rule."""
    return Analysis(module, settings).run()


@dataclass
class _Loop:
    breaks: list[Env] = field(default_factory=list)
    continues: list[Env] = field(default_factory=list)


@dataclass
class _Frame:
    """What a running function collects: returned values and the paths that leave it."""

    returns: list[Value] = field(default_factory=list)
    exits: list[Env] = field(default_factory=list)
    yields: list[Value] = field(default_factory=list)


class Analysis(CallEvaluator):
    """Walks statements; expressions and calls are evaluated by the base classes."""

    def __init__(self, module: cst.Module, settings: Settings) -> None:
        super().__init__()
        self.module = module
        self.device_names = frozenset(settings.device_names)
        self.loops: list[_Loop] = []
        self.frames: list[_Frame] = []
        self.pending: list[list[FunctionInfo]] = []
        self.active: list[cst.FunctionDef] = []
        self.analysed: set[cst.FunctionDef] = set()
        self.cache: dict[tuple, tuple[object, list[object]]] = {}
        self._statements: dict[type, Callable[[cst.CSTNode, Env], Env | None]] = {
            cst.SimpleStatementLine: self._simple_line,
            cst.If: self._if,
            cst.For: self._for,
            cst.While: self._while,
            cst.Try: self._try,
            cst.TryStar: self._try,
            cst.With: self._with,
            cst.FunctionDef: self._function_def,
            cst.ClassDef: self._class_def,
            cst.Match: self._match,
        }
        self._small: dict[type, Callable[[cst.CSTNode, Env], Env | None]] = {
            cst.Expr: self._expression_statement,
            cst.Assign: self._assign,
            cst.AnnAssign: self._annotated_assign,
            cst.AugAssign: self._augmented_assign,
            cst.Return: self._return,
            cst.Raise: self._raise,
            cst.Break: self._break,
            cst.Continue: self._continue,
            cst.Import: self._import,
            cst.ImportFrom: self._import_from,
            cst.Del: self._delete,
            cst.Assert: self._assert,
        }

    def run(self) -> Facts:
        env = Env()
        self.pending.append([])
        final = self.block(self.module.body, env)
        self.flush_pending(final if final is not None else env)
        facts = Facts(self.module, events=self.events, values=self.values)
        for event in self.events:
            if isinstance(event, OperandsMeet):
                facts.operand_meetings.append(event)
            elif isinstance(event, ModuleCall):
                facts.module_calls.append(event)
            elif isinstance(event, DiscardedTransfer):
                facts.discarded_transfers.append(event)
        return facts

    # -- blocks -----------------------------------------------------------------

    def block(self, statements, env: Env | None) -> Env | None:
        for statement in statements:
            if env is None:
                return None
            handler = self._statements.get(type(statement))
            if handler is not None:
                env = handler(statement, env)
        return env

    def suite(self, body: cst.BaseSuite, env: Env | None) -> Env | None:
        if isinstance(body, cst.SimpleStatementSuite):
            return self._simple_line(body, env) if env is not None else None
        return self.block(body.body, env)

    def _simple_line(self, line: cst.SimpleStatementLine | cst.SimpleStatementSuite,
                     env: Env) -> Env | None:
        for statement in line.body:
            handler = self._small.get(type(statement))
            if handler is not None:
                env = handler(statement, env)
                if env is None:
                    return None
        return env

    # -- simple statements ----------------------------------------------------------

    def _expression_statement(self, statement: cst.Expr, env: Env) -> Env:
        expression = statement.value
        self.eval(expression, env)
        if (
            isinstance(expression, cst.Call)
            and isinstance(expression.func, cst.Attribute)
            and expression.func.attr.value in MOVES
        ):
            self._bare_move(expression, expression.func.value, env)
        return env

    def _bare_move(self, call: cst.Call, receiver_node: cst.BaseExpression, env: Env) -> None:
        """A move as a statement: a lost copy for tensors, an in-place move otherwise."""
        receiver = self.values.get(receiver_node, UNKNOWN_VALUE)
        if receiver.kind is Kind.TENSOR:
            method = call.func.attr.value
            self.events.append(DiscardedTransfer(call, Operand(receiver_node, receiver), method))
        elif receiver.kind in (Kind.UNKNOWN, Kind.BATCH):
            moved = self.values.get(call)
            if moved is not None and is_known(moved.device):
                self.rebind(receiver_node, moved if receiver.kind is Kind.BATCH else
                            Value(Kind.UNKNOWN, moved.device, moved.origin), env)

    def _assign(self, statement: cst.Assign, env: Env) -> Env:
        value = self.eval(statement.value, env)
        for target in statement.targets:
            self.bind(target.target, value, env)
        return env

    def _annotated_assign(self, statement: cst.AnnAssign, env: Env) -> Env:
        if statement.value is not None:
            self.bind(statement.target, self.eval(statement.value, env), env)
        return env

    def _augmented_assign(self, statement: cst.AugAssign, env: Env) -> Env:
        current = self.eval(statement.target, env)
        value = self.eval(statement.value, env)
        operator = type(statement.operator).__name__.replace("Assign", "")
        strict = isinstance(statement.operator, cst.MatrixMultiplyAssign)
        result = self.operate(statement, operator, current, statement.target, value,
                              statement.value, strict)
        if is_tensor_like(current):
            result = current
        self.bind(statement.target, result, env)
        return env

    def _return(self, statement: cst.Return, env: Env) -> None:
        value = self.eval(statement.value, env) if statement.value is not None else NONE_VALUE
        if self.frames:
            self.frames[-1].returns.append(value)
            self.frames[-1].exits.append(env)
        return None

    def _raise(self, statement: cst.Raise, env: Env) -> None:
        if statement.exc is not None:
            self.eval(statement.exc, env)
        return None

    def _break(self, statement: cst.Break, env: Env) -> None:
        if self.loops:
            self.loops[-1].breaks.append(env)
        return None

    def _continue(self, statement: cst.Continue, env: Env) -> None:
        if self.loops:
            self.loops[-1].continues.append(env)
        return None

    def _import(self, statement: cst.Import, env: Env) -> Env:
        for alias in statement.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                env.set(alias.asname.name.value, self.namespace(full))
            else:
                top = full.split(".", 1)[0]
                env.set(top, self.namespace(top))
        return env

    def _import_from(self, statement: cst.ImportFrom, env: Env) -> Env:
        if isinstance(statement.names, cst.ImportStar):
            return env
        base = dotted_name(statement.module) if statement.module is not None else None
        for alias in statement.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else None
            if name is None:
                continue
            local = alias.asname.name.value if alias.asname is not None and isinstance(
                alias.asname.name, cst.Name) else name
            if base is None or statement.relative:
                env.set(local, UNKNOWN_VALUE)
            else:
                env.set(local, self.namespace(f"{base}.{name}"))
        return env

    def _delete(self, statement: cst.Del, env: Env) -> Env:
        targets = statement.target
        elements = targets.elements if isinstance(targets, (cst.Tuple, cst.List)) else None
        for target in [e.value for e in elements] if elements else [targets]:
            path = dotted_name(target)
            if path is not None:
                env.delete(path)
        return env

    def _assert(self, statement: cst.Assert, env: Env) -> Env:
        self.eval(statement.test, env)
        return env

    # -- binding ----------------------------------------------------------------

    def bind(self, target: cst.BaseExpression, value: Value, env: Env) -> None:
        if isinstance(target, cst.Name):
            env.set(target.value, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            self._unpack(target, value, env)
        elif isinstance(target, cst.Attribute):
            path = dotted_name(target)
            if path is not None:
                env.set(path, value)
            else:
                self.eval(target.value, env)
        elif isinstance(target, cst.Subscript):
            self._store_item(target, value, env)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, Value(Kind.SEQUENCE, element=element_of(value)), env)

    def _store_item(self, target: cst.Subscript, value: Value, env: Env) -> None:
        """``batch[k] = batch[k].to(device)`` changes what the container holds."""
        container = self.eval(target.value, env)
        for element in target.slice:
            if isinstance(element.slice, cst.Index):
                self.eval(element.slice.value, env)
        path = dotted_name(target.value)
        if path is None or not (_is_container(container) or _is_batch_part(container)):
            return
        key = target.slice[0].slice if len(target.slice) == 1 else None
        name = key.value.evaluated_value if isinstance(key, cst.Index) and isinstance(
            key.value, cst.SimpleString) else None
        if container.kind is Kind.MAPPING and container.keys is not None and name is not None:
            keys = container.keys if name in container.keys else (*container.keys, name)
            items = dict(zip(container.keys, container.items or (), strict=False))
            items[name] = value
            env.set(path, Value(Kind.MAPPING, items=tuple(items[k] for k in keys), keys=keys))
            return
        part = element_of(container) if container.kind is not Kind.MAPPING else (
            container.element or UNKNOWN_VALUE)
        joined = join_values(part, value)
        if container.kind is not Kind.MAPPING and container.kind is not Kind.SEQUENCE:
            env.set(path, container.with_device(joined.device, joined.origin))
        else:
            env.set(path, Value(container.kind, element=joined))

    def _unpack(self, target: cst.Tuple | cst.List, value: Value, env: Env) -> None:
        elements = target.elements
        starred = any(isinstance(e, cst.StarredElement) for e in elements)
        items = value.items if value.kind is Kind.SEQUENCE else None
        if items is not None and not starred and len(items) == len(elements):
            for element, item in zip(elements, items, strict=True):
                self.bind(element.value, item, env)
            return
        part = element_of(value)
        for element in elements:
            if isinstance(element, cst.StarredElement):
                self.bind(element.value, Value(Kind.SEQUENCE, element=part), env)
            else:
                self.bind(element.value, part, env)

    # -- attributes ---------------------------------------------------------------

    def attribute_of(self, base: Value, name: str, node: cst.Attribute) -> Value:
        kind = base.kind
        if kind is Kind.NAMESPACE:
            qualname = f"{base.ref}.{name}"
            return Value(Kind.DTYPE) if qualname in _DTYPES else self.namespace(qualname)
        if is_tensor_like(base):
            return self.tensor_attribute(base, name)
        if kind is Kind.INSTANCE and isinstance(base.ref, ClassInfo):
            if base.keys is not None and name in base.keys:
                return base.items[base.keys.index(name)]
            return base.ref.attrs.get(name, UNKNOWN_VALUE)
        if kind is Kind.DEVICE:
            return Value(Kind.STRING) if name == "type" else SCALAR_VALUE
        if name == "device" and kind not in (Kind.MODULE, Kind.WRAPPER):
            path = dotted_name(node)
            if path is not None:
                return Value(Kind.DEVICE, Symbol(path), Origin("given as {}", node, node))
        if kind in (Kind.MODULE, Kind.WRAPPER) and name in ("weight", "bias"):
            return Value(Kind.TENSOR, base.device, base.origin)
        return UNKNOWN_VALUE

    # -- control flow ---------------------------------------------------------------

    def _if(self, statement: cst.If, env: Env) -> Env | None:
        self.eval(statement.test, env)
        guarded = mentions_accelerator(statement.test)
        then_env = self.suite(statement.body, env.copy())
        orelse = statement.orelse
        if orelse is None:
            else_env = env
        elif isinstance(orelse, cst.If):
            else_env = self._if(orelse, env.copy())
        else:
            else_env = self.suite(orelse.body, env.copy())
        return join_envs(then_env, else_env, guarded=guarded)

    def _loop(self, env: Env, prepare: Callable[[Env], None], body: cst.BaseSuite
              ) -> tuple[Env, list[Env]]:
        """Run a loop body to a fixpoint; returns the normal exit and the ``break`` paths.

        Events of a pass are kept only when the pass started from the fixpoint,
        so a finding never rests on a value the loop later widens.
        """
        entry = env.copy()
        for attempt in range(MAX_LOOP_PASSES + 1):
            mark = len(self.events)
            frame = _Loop()
            self.loops.append(frame)
            start = entry.copy()
            prepare(start)
            try:
                out = self.suite(body, start)
            finally:
                self.loops.pop()
            back = out
            for path in frame.continues:
                back = join_envs(back, path)
            widened = join_envs(entry, back)
            if _stable(entry, widened) or attempt == MAX_LOOP_PASSES:
                return widened, frame.breaks
            del self.events[mark:]
            entry = widened if attempt < MAX_LOOP_PASSES - 1 else _forget_changes(entry, widened)
        raise AssertionError("unreachable")

    def _for(self, statement: cst.For, env: Env) -> Env | None:
        iterable = self.eval(statement.iter, env)
        element = self.iterate(iterable, statement.iter)
        normal, breaks = self._loop(
            env, lambda start: self.bind(statement.target, element, start), statement.body)
        return self._loop_exit(statement.orelse, normal, breaks)

    def _while(self, statement: cst.While, env: Env) -> Env | None:
        self.eval(statement.test, env)
        normal, breaks = self._loop(
            env, lambda start: self.eval(statement.test, start), statement.body)
        return self._loop_exit(statement.orelse, normal, breaks)

    def _loop_exit(self, orelse: cst.Else | None, normal: Env, breaks: list[Env]
                   ) -> Env | None:
        """Where a loop continues: its ``else`` after a normal end, joined with breaks."""
        result = self.suite(orelse.body, normal.copy()) if orelse is not None else normal
        for path in breaks:
            result = join_envs(result, path)
        return result

    def _try(self, statement: cst.Try | cst.TryStar, env: Env) -> Env | None:
        body_env = self.suite(statement.body, env.copy())
        anywhere = join_envs(env, body_env)
        result = self.suite(statement.orelse.body, body_env) if statement.orelse else body_env
        for handler in statement.handlers:
            start = anywhere.copy()
            if handler.name is not None:
                self.bind(handler.name.name, UNKNOWN_VALUE, start)
            if handler.type is not None:
                self.eval(handler.type, start)
            result = join_envs(result, self.suite(handler.body, start))
        if statement.finalbody is None:
            return result
        if result is None:
            self.suite(statement.finalbody.body, anywhere.copy())
            return None
        return self.suite(statement.finalbody.body, result)

    def _with(self, statement: cst.With, env: Env) -> Env | None:
        for item in statement.items:
            value = self.eval(item.item, env)
            if item.asname is not None:
                self.bind(item.asname.name, value if value.kind is Kind.TENSOR else
                          UNKNOWN_VALUE, env)
        return self.suite(statement.body, env)

    def _match(self, statement: cst.Match, env: Env) -> Env | None:
        self.eval(statement.subject, env)
        result: Env | None = env
        for case in statement.cases:
            result = join_envs(result, self.suite(case.body, env.copy()))
        return result

    # -- functions --------------------------------------------------------------------

    def _function_def(self, statement: cst.FunctionDef, env: Env) -> Env:
        info = FunctionInfo(statement, env)
        env.set(statement.name.value, Value(Kind.FUNCTION, ref=info))
        if self.pending:
            self.pending[-1].append(info)
        return env

    def flush_pending(self, scope: Env) -> None:
        """Analyse, with unknown arguments, every function defined in the scope just left."""
        for info in self.pending.pop():
            if info.node in self.analysed:
                continue
            self.analysed.add(info.node)
            if info.owner is None:
                info.closure = scope
            receiver = self._generic_receiver(info)
            self.run_function(info, self.bind_parameters(info, None, receiver))

    def _generic_receiver(self, info: FunctionInfo) -> Value | None:
        if info.owner is None or _is_static(info.node):
            return None
        return Value(Kind.INSTANCE, ref=info.owner)

    def call_function(self, info: FunctionInfo, args: Args, receiver: Value | None) -> Value:
        """Analyse a local function for these arguments (cached); returns its result."""
        key = (id(info.node), _signature(receiver), _args_signature(args))
        cached = self.cache.get(key)
        if cached is not None:
            result, events = cached
            self.events.extend(events)
            return result
        if len(self.active) >= MAX_CALL_DEPTH or info.node in self.active:
            return Value(Kind.UNKNOWN, ref=CALL_RESULT)
        mark = len(self.events)
        frame = self.run_function(info, self.bind_parameters(info, args, receiver))
        result = self._result(info, frame)
        self.cache[key] = (result, self.events[mark:])
        return result

    def _result(self, info: FunctionInfo, frame: _Frame) -> Value:
        if frame.yields:
            return Value(Kind.ITERABLE, element=join_all(frame.yields))
        return join_all(frame.returns) if frame.returns else NONE_VALUE

    def run_function(self, info: FunctionInfo, env: Env) -> _Frame:
        frame = _Frame()
        self.frames.append(frame)
        self.yields.append(frame.yields)
        self.pending.append([])
        self.active.append(info.node)
        saved_loops, self.loops = self.loops, []
        try:
            out = self.suite(info.node.body, env)
        finally:
            self.loops = saved_loops
            self.active.pop()
            self.frames.pop()
            self.yields.pop()
        if out is not None:
            frame.returns.append(NONE_VALUE)
            frame.exits.append(out)
        exit_env = None
        for path in frame.exits:
            exit_env = join_envs(exit_env, path)
        self.flush_pending(exit_env if exit_env is not None else env)
        return frame

    def bind_parameters(self, info: FunctionInfo, args: Args | None, receiver: Value | None
                        ) -> Env:
        env = Env(parent=info.closure)
        params = info.node.params
        ordered = [*params.posonly_params, *params.params]
        if receiver is not None and ordered:
            env.set(ordered[0].name.value, receiver)
            ordered = ordered[1:]
        positional = args.positional if args is not None else ()
        for index, param in enumerate(ordered):
            given = positional[index] if index < len(positional) else None
            self._bind_parameter(param, given, args, env)
        for param in params.kwonly_params:
            self._bind_parameter(param, None, args, env)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                env.set(star.name.value, UNKNOWN_VALUE)
        return env

    def _bind_parameter(self, param: cst.Param, given, args: Args | None, env: Env) -> None:
        name = param.name.value
        if given is None and args is not None:
            given = args.keywords.get(name)
        value = given[1] if given is not None else None
        if value is None and args is not None and param.default is not None:
            value = self.eval(param.default, env.parent or env)
        if value is None or (value.kind is Kind.UNKNOWN and not is_known(value.device)):
            value = self._unknown_parameter(name, param)
        env.set(name, value)

    def _unknown_parameter(self, name: str, param: cst.Param) -> Value:
        """What a parameter holds when the caller is unknown: its name is the only clue."""
        if is_device_name(name, self.device_names):
            return Value(Kind.DEVICE, Symbol(name), Origin("passed in as {}", param, param.name))
        if is_loader_name(name):
            return Value(Kind.LOADER, CPU, None)
        return UNKNOWN_VALUE

    # -- classes --------------------------------------------------------------------------

    def _class_def(self, statement: cst.ClassDef, env: Env) -> Env:
        info = ClassInfo(statement, ClassKind.PLAIN)
        unknown_base = False
        for base in statement.bases:
            value = self.eval(base.value, env)
            if value.kind is Kind.CLASS and isinstance(value.ref, ClassInfo):
                parent = value.ref
                info.kind = parent.kind if info.kind is ClassKind.PLAIN else info.kind
                info.methods.update(parent.methods)
                info.attrs.update(parent.attrs)
                info.stateful = parent.stateful
            elif value.kind is Kind.NAMESPACE and value.ref in _MODULE_BASES:
                info.kind = ClassKind.MODULE
            elif value.kind is Kind.NAMESPACE and value.ref in _DATASET_BASES:
                info.kind = ClassKind.DATASET
            elif value.kind is Kind.NAMESPACE and torch_api.nn_module(value.ref):
                info.kind = ClassKind.MODULE
                unknown_base = True
            elif base.keyword is None:
                unknown_base = True
        for item in statement.body.body:
            if isinstance(item, cst.FunctionDef):
                info.methods[item.name.value] = FunctionInfo(item, env, info)
        env.set(statement.name.value, Value(Kind.CLASS, ref=info))
        init = info.methods.get("__init__")
        if init is not None and init.owner is info:
            self._analyse_init(info, init, unknown_base)
        elif unknown_base:
            info.stateful = None
        for method in info.methods.values():
            if method.owner is info and method is not init and self.pending:
                self.pending[-1].append(method)
        return env

    def _analyse_init(self, info: ClassInfo, init: FunctionInfo, unknown_base: bool) -> None:
        self.analysed.add(init.node)
        receiver = Value(Kind.INSTANCE, ref=info)
        attrs, moved = self._construct_attrs(init, None, receiver)
        _forget_assigned_elsewhere(info, attrs)
        info.moves_itself = moved or any(
            _is_state(value) and is_known(value.device) and value.device != CPU
            for value in attrs.values()
        )
        if info.kind is ClassKind.MODULE:
            info.stateful = _stateful(attrs.values(), info.stateful, unknown_base)
            inside = Symbol("self", accel=False)
            for name, value in attrs.items():
                if _is_state(value):
                    attrs[name] = value.with_device(inside, None)
        info.attrs.update(attrs)

    def _construct_attrs(self, init: FunctionInfo, args: Args | None, receiver: Value
                         ) -> tuple[dict[str, Value], bool]:
        """Run ``__init__``; returns what it leaves on self and whether it moved self."""
        env = self.bind_parameters(init, args, receiver)
        frame = self.run_function(init, env)
        exit_env = None
        for path in frame.exits:
            exit_env = join_envs(exit_env, path)
        if exit_env is None:
            return {}, False
        params = [*init.node.params.posonly_params, *init.node.params.params]
        own = params[0].name.value if params else "self"
        prefix = own + "."
        attrs = {
            key[len(prefix):]: value
            for key, value in exit_env.bindings.items()
            if key.startswith(prefix) and "." not in key[len(prefix):]
        }
        final_self = exit_env.bindings.get(own)
        return attrs, final_self is not None and is_known(final_self.device)

    def instantiate(self, info: ClassInfo, node: cst.Call, args: Args) -> Value:
        origin = Origin("created", node)
        if info.kind is ClassKind.MODULE:
            device = UNKNOWN if info.moves_itself else CPU
            return Value(Kind.MODULE, device, origin, stateful=info.stateful, ref=info)
        instance = self._construct(info, args)
        if info.kind is ClassKind.DATASET:
            getitem = info.methods.get("__getitem__")
            item = UNKNOWN_VALUE
            if getitem is not None:
                item = self.call_function(getitem, Args(((node, SCALAR_VALUE),), {}), instance)
            device = accelerator_inside(item)
            return Value(Kind.DATASET, device or CPU, item.origin if device else origin)
        return instance

    def _construct(self, info: ClassInfo, args: Args) -> Value:
        init = info.methods.get("__init__")
        receiver = Value(Kind.INSTANCE, ref=info)
        if init is None or len(self.active) >= MAX_CALL_DEPTH or init.node in self.active:
            return receiver
        key = ("init", id(init.node), _args_signature(args))
        cached = self.cache.get(key)
        if cached is not None:
            instance, events = cached
            self.events.extend(events)
            return instance
        mark = len(self.events)
        attrs, _ = self._construct_attrs(init, args, receiver)
        _forget_assigned_elsewhere(info, attrs)
        merged = {**info.attrs, **attrs}
        instance = Value(Kind.INSTANCE, ref=info, keys=tuple(merged),
                         items=tuple(merged.values()))
        self.cache[key] = (instance, self.events[mark:])
        return instance


def _is_container(value: Value) -> bool:
    return value.kind in (Kind.BATCH, Kind.MAPPING, Kind.SEQUENCE)


def _is_batch_part(value: Value) -> bool:
    """A piece of a DataLoader batch: a tensor, or a dict of them (``batch["x"][k] = …``)."""
    return value.origin is not None and value.origin.from_loader


def _is_state(value: Value) -> bool:
    """A submodule, parameter or buffer: what ``Module.to()`` moves."""
    return value.kind in (Kind.MODULE, Kind.WRAPPER) or value.ref in (PARAMETER, BUFFER)


def _stable(before: Env, after: Env | None) -> bool:
    """Whether the loop entry is a fixpoint for the names bound before the loop."""
    if after is None:
        return True
    for name, value in before.bindings.items():
        other = after.bindings.get(name)
        if other is None or not value.same(other):
            return False
    return True


def _forget_changes(before: Env, after: Env) -> Env:
    """Widening: names still changing after several passes become unknown."""
    result = after.copy()
    for name, value in after.bindings.items():
        previous = before.bindings.get(name)
        if previous is None or not previous.same(value):
            result.bindings[name] = UNKNOWN_VALUE
    return result


def _is_static(node: cst.FunctionDef) -> bool:
    return any(
        isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod")
        for d in node.decorators
    )


def _signature(value: Value | None, depth: int = 2) -> tuple | None:
    if value is None:
        return None
    origin = id(value.origin.node) if value.origin is not None else None
    parts: tuple = (value.kind, value.device, value.ndim, value.stateful, id(value.ref), origin)
    if depth:
        if value.items:
            parts += tuple(_signature(item, depth - 1) for item in value.items)
        if value.element is not None:
            parts += (_signature(value.element, depth - 1),)
    return parts


def _args_signature(args: Args) -> tuple:
    positional = tuple(_signature(value) for _, value in args.positional)
    keywords = tuple(sorted((name, _signature(value)) for name, (_, value) in
                            args.keywords.items()))
    return positional, keywords


def _stateful(attrs, inherited: bool | None, unknown_base: bool) -> bool | None:
    """Whether module instances own parameters or buffers, from what ``__init__`` sets."""
    values = list(attrs)
    if inherited or any(
        (v.kind in (Kind.MODULE, Kind.WRAPPER) and v.stateful) or v.ref in (PARAMETER, BUFFER)
        for v in values
    ):
        return True
    if unknown_base or any(
        (v.kind in (Kind.MODULE, Kind.WRAPPER) and v.stateful is None)
        or (v.kind is Kind.UNKNOWN and v.ref is CALL_RESULT)
        for v in values
    ):
        return None
    return False


def _forget_assigned_elsewhere(info: ClassInfo, attrs: dict[str, Value]) -> None:
    """Attributes other methods reassign (or move, unless tensors) are unknown elsewhere."""
    assigned, moved = _assigned_elsewhere(info)
    for name in assigned:
        attrs[name] = UNKNOWN_VALUE
    for name in moved:
        if attrs.get(name, UNKNOWN_VALUE).kind is not Kind.TENSOR:
            attrs[name] = UNKNOWN_VALUE


def _assigned_elsewhere(info: ClassInfo) -> tuple[set[str], set[str]]:
    """Attributes of self that methods other than ``__init__`` assign, and that they move."""
    assigned: set[str] = set()
    moved: set[str] = set()
    for name, method in info.methods.items():
        if name == "__init__":
            continue
        params = [*method.node.params.posonly_params, *method.node.params.params]
        if not params:
            continue
        owner = params[0].name.value
        _collect_self_assignments(method.node.body, owner, assigned, moved)
    return assigned, moved


def _collect_self_assignments(suite: cst.BaseSuite, owner: str, assigned: set[str],
                              moved: set[str]) -> None:
    for statement in suite.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                is_move = isinstance(small, cst.Expr)
                for target in _targets(small):
                    if (
                        isinstance(target, cst.Attribute)
                        and isinstance(target.value, cst.Name)
                        and target.value.value == owner
                    ):
                        (moved if is_move else assigned).add(target.attr.value)
        elif isinstance(statement, cst.BaseCompoundStatement) and not isinstance(
            statement, (cst.FunctionDef, cst.ClassDef)
        ):
            for child in statement.children:
                if isinstance(child, cst.BaseSuite):
                    _collect_self_assignments(child, owner, assigned, moved)
                elif hasattr(child, "body") and isinstance(child.body, cst.BaseSuite):
                    _collect_self_assignments(child.body, owner, assigned, moved)


def _targets(small: cst.BaseSmallStatement) -> list[cst.BaseExpression]:
    if isinstance(small, cst.Assign):
        return [t.target for t in small.targets]
    if isinstance(small, (cst.AugAssign, cst.AnnAssign)):
        return [small.target]
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        func = small.value.func
        if isinstance(func, cst.Attribute) and func.attr.value in MOVES:
            return [func.value]
    return []
