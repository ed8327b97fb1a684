"""Functions defined in the file: analysed once on their own, and again per call context.

Parameters of the context-free analysis are unknown (their names are the
only clue: ``device``, ``train_loader``). At a call site the body runs again
with the caller's argument values, cached by their signature, so helpers that
move batches move them and a ``train(model, loader)`` sees the caller's model.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import libcst as cst

from devlint.core import torch_facts
from devlint.core.binder import Env, attributes_of, join_envs
from devlint.core.events import ArgumentsGiven, Event
from devlint.core.lattice import CPU, MODULE_DEVICE, UNKNOWN, Symbol, is_known, is_placed
from devlint.core.roles import EvaluatesExpressions, Frame, RunsStatements
from devlint.core.scopes import Args, ClassInfo, ClassKind, FunctionInfo
from devlint.core.state import AnalysisState, Part
from devlint.core.syntax import (
    decorated_with,
    descendants,
    dotted_name,
    is_device_name,
    is_loader_name,
    receiver_name,
)
from devlint.core.tensor_evidence import TensorParameters, tensor_parameters
from devlint.core.values import (
    CALL_RESULT,
    NONE_VALUE,
    ONE_PATH,
    UNKNOWN_VALUE,
    Kind,
    Origin,
    Value,
    join_all,
    parts,
    placed_state,
    used_as_module,
)

MAX_CALL_DEPTH = 4
MAX_DEPTH_ELSEWHERE = 1
"""Calls into other files' code that run inside each other: a helper's own helpers in yet
other modules are unknown (the cost of following a library's call chains from every file
that uses it buys few findings)."""


class Functions(Part):
    """Local functions and methods: context-free and per-call analyses."""

    def __init__(self, state: AnalysisState) -> None:
        super().__init__(state)
        self.pending: list[list[FunctionInfo]] = []  # functions defined in each open scope
        self.analysed: set[tuple[cst.FunctionDef, object]] = set()  # (function, its class)
        self.cache: dict[tuple, tuple[object, list[Event]]] = {}
        self.in_place_cache: dict[tuple, tuple[Value, list[tuple[str, Value]], list[Event]]] = {}

    def connect(self, *, expressions: EvaluatesExpressions, flow: RunsStatements) -> None:
        self.expressions = expressions
        self.flow = flow

    def function_def(self, statement: cst.FunctionDef, env: Env) -> Env:
        info = FunctionInfo(statement, env, home=self.state.code_home())
        env.set(statement.name.value, Value(Kind.FUNCTION, ref=info))
        self.defer(info)
        return env

    def run_module(self, module: cst.Module) -> None:
        """Run the module's statements, then analyse the functions it defines."""
        env = Env()
        self.pending.append([])
        final = self.flow.block(module.body, env)
        for info in self.state.unsettled:
            info.settle_now()
        self.flush_pending(final if final is not None else env)

    def run_top_level(self, module: cst.Module) -> Env:
        """Run the module's statements for the files that import it: its functions are
        analysed when those files call them, so only their closure is set here."""
        env = Env()
        self.pending.append([])
        final = self.flow.block(module.body, env) or env
        for info in self.pending.pop():
            if info.owner is None:
                info.closure = final
        return final

    def defer(self, info: FunctionInfo) -> None:
        """Analyse ``info`` with unknown arguments when the scope that defines it ends."""
        if self.pending:
            self.pending[-1].append(info)

    def flush_pending(self, scope: Env) -> None:
        """Analyse, with unknown arguments, every function defined in the scope just left.

        Functions with tensor parameters go last, so that the calls the others make
        to them are seen first (see ``_tensor_parameters``); a function that only
        takes sequences of tensors goes first, as the callers that build them do.
        Among those, callers go before the functions they call, for the same reason (the
        order of the others changes nothing: they have no tensor parameters to be told of).
        """
        pending = self.pending.pop()
        tensors = {info: bool(self._tensor_parameters(info).tensors) for info in pending}
        first = [info for info in pending if not tensors[info]]
        last = [info for info in pending if tensors[info]]
        order = _callers_first(last) if len(last) > 1 else {}
        for info in first + sorted(last, key=lambda info: order.get(info, 0)):
            if not self.mark_analysed(info):
                continue
            if info.owner is None:
                info.closure = scope
            receiver = self._generic_receiver(info)
            self.state.free_runs.append(info)
            try:
                self.run_function(info, self.bind_parameters(info, None, receiver))
            finally:
                self.state.free_runs.pop()

    def mark_analysed(self, info: FunctionInfo) -> bool:
        """Note the context-free analysis of ``info`` (for its class); False if done before."""
        key = (info.node, info.owner)
        if key in self.analysed:
            return False
        self.analysed.add(key)
        return True

    def _generic_receiver(self, info: FunctionInfo) -> Value | None:
        if info.owner is None or decorated_with(info.node, "staticmethod", "classmethod"):
            return None
        return Value(Kind.INSTANCE, ref=info.owner)

    def call_function(self, info: FunctionInfo, args: Args, receiver: Value | None) -> Value:
        """Analyse a local function for these arguments (cached); returns its result."""
        key = (id(info.node), signature(receiver), args_signature(args))
        cached = self.cache.get(key)
        if cached is not None:
            result, events = cached
            self.state.replay(events)
            return replace(result)  # another object: names of it are aliases of this call only
        if not self.can_enter(info):
            return Value(Kind.UNKNOWN, ref=CALL_RESULT)
        with self.state.recording() as recorded:
            frame = self.run_function(info, self.bind_parameters(info, args, receiver))
            result = self._result(info, frame)
        self.cache[key] = (result, recorded.events)
        return result

    def call_in_place(
        self, info: FunctionInfo, args: Args, receiver: cst.BaseExpression, env: Env
    ) -> Value:
        """Run a construction helper (``self.get_data()`` in ``__init__``) on the object being
        built: it sees what ``__init__`` set so far, and what it sets on ``self`` stays set.
        Its own run is this one: alone, it would take ``self`` as a module already placed."""
        path = dotted_name(receiver)
        own = receiver_name(info.node)
        if path is None or own is None or not self.can_enter(info):
            return Value(Kind.UNKNOWN, ref=CALL_RESULT)
        self.mark_analysed(info)
        if info.owner is not None:
            info.owner.built_by.add(info.name)
        given = attributes_of(env, path)
        receiver_value = env.get(path) or Value(Kind.INSTANCE, ref=info.owner)
        key = (
            id(info.node),
            signature(receiver_value),
            args_signature(args),
            tuple((name, signature(value)) for name, value in given),
        )
        cached = self.in_place_cache.get(key)
        if cached is None:
            with self.state.recording() as recorded:
                result, left = self._run_in_place(info, args, receiver_value, given, own)
            cached = (result, left, recorded.events)
            self.in_place_cache[key] = cached
        else:
            self.state.replay(cached[2])
        for name, value in cached[1]:
            env.set(f"{path}.{name}", value)
        return replace(cached[0])

    def _run_in_place(
        self,
        info: FunctionInfo,
        args: Args,
        receiver: Value,
        given: list[tuple[str, Value]],
        own: str,
    ) -> tuple[Value, list[tuple[str, Value]]]:
        """The helper's result, and the attributes it leaves on ``own`` (its ``self``)."""
        callee = self.bind_parameters(info, args, receiver)
        for name, value in given:
            callee.set(f"{own}.{name}", value)
        frame = self.run_function(info, callee)
        exit_env = None
        for exit_path in frame.exits:
            exit_env = join_envs(exit_env, exit_path)
        left = attributes_of(exit_env, own) if exit_env is not None else []
        return self._result(info, frame), left

    def _result(self, info: FunctionInfo, frame: Frame) -> Value:
        if frame.yields:
            return Value(Kind.ITERABLE, element=join_all(frame.yields))
        if not frame.returns:
            return NONE_VALUE
        return join_all([_as_returned(value) for value in frame.returns])

    def run_function(self, info: FunctionInfo, env: Env) -> Frame:
        """Run a function's body, then analyse the functions it defines."""
        self.pending.append([])
        self.state.running_homes.append(info.home)
        if info.home is not None and info.home is not self.state.home:
            self.state.note_import(info.home)  # messages may name its lines
        try:
            frame = self.flow.run_body(info.node, env)
        finally:
            self.state.running_homes.pop()
        exit_env = None
        for path in frame.exits:
            exit_env = join_envs(exit_env, path)
        self.flush_pending(exit_env if exit_env is not None else env)
        return frame

    def can_enter(self, info: FunctionInfo) -> bool:
        """Whether a call may run ``info`` again: not recursively, not too deep, and code
        of other files only as far as ``MAX_DEPTH_ELSEWHERE`` calls into them."""
        running = self.flow.running()
        if len(running) >= MAX_CALL_DEPTH or info.node in running:
            return False
        if info.home is None or info.home is self.state.home:
            return True
        homes = (None, self.state.home)
        elsewhere = sum(1 for home in self.state.running_homes if home not in homes)
        return elsewhere < MAX_DEPTH_ELSEWHERE

    def bind_parameters(self, info: FunctionInfo, args: Args | None, receiver: Value | None) -> Env:
        home = info.home
        env = Env(parent=home.globals_for(info.node, info.closure) if home else info.closure)
        params = info.node.params
        ordered = [*params.posonly_params, *params.params]
        if receiver is not None and ordered and not decorated_with(info.node, "staticmethod"):
            env.set(ordered[0].name.value, receiver)
            _take_flag_splits(env, ordered[0].name.value, receiver)
            ordered = ordered[1:]
        positional = args.positional if args is not None else ()
        module_method = info.owner is not None and info.owner.kind is ClassKind.MODULE
        # inputs live on the module's device only where that is the symbol: a run on an
        # instance placed somewhere (`model.forward(x)` on a cpu model) says where it is
        module_method = module_method and (receiver is None or not is_placed(receiver.device))
        tensors = self._tensor_parameters(info) if args is None else TensorParameters()
        given: list[tuple[str, Value]] = []
        for index, param in enumerate(ordered):
            passed = positional[index] if index < len(positional) else None
            is_input = module_method and info.takes_input(param, index)
            given += self._bind_parameter(info, param, passed, args, env, is_input, tensors)
        for param in params.kwonly_params:
            is_input = module_method and info.takes_input(param, -1)
            given += self._bind_parameter(info, param, None, args, env, is_input, tensors)
        self._note_arguments_given(info, given)
        if isinstance(params.star_arg, cst.Param):
            env.set(params.star_arg.name.value, _extra_positional(args, len(ordered)))
        if isinstance(params.star_kwarg, cst.Param):
            env.set(params.star_kwarg.name.value, UNKNOWN_VALUE)
        return env

    def _tensor_parameters(self, info: FunctionInfo) -> TensorParameters:
        """Parameters the function's code shows to be tensors, when its caller is unknown.

        Parameters that callers in this file give values the analysis knows are
        left to those calls: the function's context-free run would otherwise
        report a helper only ever called with cpu tensors.
        """
        return self.tensor_evidence(info).without(info.passed)

    def tensor_evidence(self, info: FunctionInfo) -> TensorParameters:
        """The parameters the function's own code shows to be tensors (computed once)."""
        if info.tensor_params is None:
            info.tensor_params = tensor_parameters(info.node, partial(_qualified, info.closure))
        return info.tensor_params

    def _note_arguments_given(self, info: FunctionInfo, given: list[tuple[str, Value]]) -> None:
        """A call of this file's code: what it gives each parameter, for the analysis of the
        file defining the function to ask (``core.callers``)."""
        if self.state.code_home() is not None or not self.state.home_calls:
            return
        self.state.record(ArgumentsGiven(self.state.home_calls[-1][0], info, tuple(given)))

    def _bind_parameter(
        self,
        info: FunctionInfo,
        param: cst.Param,
        given,
        args: Args | None,
        env: Env,
        is_input: bool,
        tensors: TensorParameters,
    ) -> list[tuple[str, Value]]:
        """Bind ``param`` in ``env``; what the caller gave it, when it gave it something."""
        name = param.name.value
        if given is None and args is not None:
            given = args.keywords.get(name)
        value = given[1] if given is not None else None
        passed = [(name, value)] if value is not None else []
        if value is not None and any(is_known(part.device) for part in parts(value)):
            info.passed.add(name)  # a caller here says where it lives: its context covers it
        if value is None and args is not None and param.default is not None:
            value = self.expressions.eval(param.default, env.parent or env)
        if value is None or (value.kind is Kind.UNKNOWN and not is_known(value.device)):
            here = info.home is None or info.home is self.state.home
            value = self._unknown_parameter(name, param, is_input, tensors, here)
            if value is UNKNOWN_VALUE and _requires_a_module(param, env.parent or env):
                value = used_as_module(
                    Value(Kind.UNKNOWN, origin=Origin("passed in as {}", param, param.name))
                )
        env.set(name, value)
        return passed

    def _unknown_parameter(
        self, name: str, param: cst.Param, is_input: bool, tensors: TensorParameters, here: bool
    ) -> Value:
        """What a parameter holds when the caller is unknown.

        A module's tensor inputs live on the module's device (that is how the
        module is meant to be called); any other parameter the code shows to be
        a tensor (or a sequence of tensors) lives on a device the caller
        chooses, ``<name>.device``; otherwise the name is the only clue, in this
        file (``here``): another file's parameter names nothing here.
        """
        if is_input:
            origin = Origin("an input of the module", param)
            return Value(Kind.TENSOR, MODULE_DEVICE, origin)
        if name in tensors.tensors or name in tensors.sequences:
            origin = Origin("passed in as {}", param, param.name)
            tensor = Value(Kind.TENSOR, Symbol(f"{name}.device", tensor=True), origin)
            return tensor if name in tensors.tensors else Value(Kind.SEQUENCE, element=tensor)
        if here and is_device_name(name, self.state.device_names):
            self.state.runtime_device = True
            return Value(Kind.DEVICE, Symbol(name), Origin("passed in as {}", param, param.name))
        if is_loader_name(name):
            return Value(Kind.LOADER, CPU, None)
        return UNKNOWN_VALUE


def _as_returned(value: Value) -> Value:
    """What a caller gets: a cpu tensor that only one path of an ``if`` made is no longer
    known to be on the cpu once the function returns it (``core.filled_defaults``)."""
    return value.with_device(UNKNOWN, None) if value.ref is ONE_PATH else value


def _qualified(scope: Env, written: str) -> str | None:
    """``F.pad`` → ``torch.nn.functional.pad`` through the imports visible in ``scope``."""
    root, _, rest = written.partition(".")
    bound = scope.get(root)
    if bound is None or bound.kind is not Kind.NAMESPACE:
        return None
    return f"{bound.ref}.{rest}" if rest else str(bound.ref)


def _requires_a_module(param: cst.Param, scope: Env) -> bool:
    """A parameter annotated ``nn.Module`` with no default: the model the function is given.

    Only a required one: a defaulted ``criterion: nn.Module = nn.MSELoss()`` may well be
    a stateless module, while a module a caller must pass is what it works on.
    """
    annotation = param.annotation
    if annotation is None or param.default is not None:
        return False
    written = dotted_name(annotation.annotation)
    return written is not None and _qualified(scope, written) in torch_facts.MODULE_BASE_CLASSES


def _extra_positional(args: Args | None, taken: int) -> Value:
    """What ``*args`` holds: the positional arguments past the named parameters, when the
    call spells each of them out (``f(*xs)`` and the context-free run leave it unknown)."""
    if args is None or args.starred:
        return UNKNOWN_VALUE
    return Value(Kind.SEQUENCE, items=tuple(value for _, value in args.positional[taken:]))


def signature(value: Value | None, depth: int = 2) -> tuple | None:
    if value is None:
        return None
    origin = id(value.origin.node) if value.origin is not None else None
    parts: tuple = (value.kind, value.device, value.ndim, value.stateful, id(value.ref), origin)
    if depth:
        if value.items:
            parts += tuple(signature(item, depth - 1) for item in value.items)
        if value.element is not None:
            parts += (signature(value.element, depth - 1),)
    return parts


def args_signature(args: Args) -> tuple:
    positional = tuple(signature(value) for _, value in args.positional)
    keywords = tuple(sorted((name, signature(value)) for name, (_, value) in args.keywords.items()))
    return positional, keywords


def _callers_first(pending: list[FunctionInfo]) -> dict[FunctionInfo, int]:
    """A position for each function, callers before the functions they call (by plain name,
    or as ``self.f``, ``cls.f``, ``Class.f``); a cycle is broken in definition order."""
    by_name: dict[str, list[FunctionInfo]] = {}
    for info in pending:
        by_name.setdefault(info.name, []).append(info)
    seen: set[FunctionInfo] = set()
    finished: list[FunctionInfo] = []  # each after everything it calls (depth first)
    for start in pending:
        if start in seen:
            continue
        seen.add(start)
        stack = [(start, iter(_callees(start, by_name)))]
        while stack:
            info, callees = stack[-1]
            callee = next((callee for callee in callees if callee not in seen), None)
            if callee is None:
                finished.append(info)
                stack.pop()
            else:
                seen.add(callee)
                stack.append((callee, iter(_callees(callee, by_name))))
    return {info: position for position, info in enumerate(reversed(finished))}


def _callees(info: FunctionInfo, by_name: dict[str, list[FunctionInfo]]) -> list[FunctionInfo]:
    found = []
    for node in descendants(info.node.body):
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            func = func.attr
        if isinstance(func, cst.Name):
            found += [callee for callee in by_name.get(func.value, ()) if callee is not info]
    return found


def _take_flag_splits(env: Env, own: str, receiver: Value) -> None:
    """A method starts knowing what ``__init__`` set on each side of a flag of self
    (``ClassInfo.flag_splits``): its own ``if self.dp:`` takes that side back. On a module a
    caller placed (``Classes.placed_instance``), each side is placed as the attribute was;
    an attribute held otherwise is left as it is."""
    info = receiver.ref
    if receiver.kind is not Kind.INSTANCE or not isinstance(info, ClassInfo):
        return
    for name, split in info.flag_splits.items():
        if not all(n == own or n.startswith(own + ".") for n in split.names):
            continue  # ``__init__`` calls its instance another name
        keys = receiver.keys or ()
        held = receiver.items[keys.index(name)] if name in keys else split.joined
        if held is not split.joined:  # a method called on a placed module: so is each side
            device, origin = receiver.device, receiver.origin
            if split.joined.device != MODULE_DEVICE or held.device != device:
                continue  # not placed by ``Classes.placed_instance``: what it holds is unsure
            true, false = (placed_state(side, device, origin) for side in split.sides)
            split = replace(split, when_true=true, when_false=false)
        env.take_split(f"{own}.{name}", held, split)
