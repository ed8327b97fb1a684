"""Classes defined in the file: what ``__init__`` leaves on self, modules and datasets."""

from __future__ import annotations

import builtins
import sys
from dataclasses import replace
from functools import partial

import libcst as cst

from devlint.core import torch_api, torch_facts
from devlint.core.binder import Env, Split, attribute_splits, attributes_of, join_envs
from devlint.core.events import Event
from devlint.core.functions import args_signature
from devlint.core.lattice import (
    CPU,
    MAYBE_ACCEL,
    MODULE_DEVICE,
    UNKNOWN,
    Concrete,
    Device,
    is_known,
)
from devlint.core.roles import EvaluatesExpressions, RunsFunctions
from devlint.core.scopes import Args, ClassInfo, ClassKind, FunctionInfo
from devlint.core.state import AnalysisState, Part
from devlint.core.syntax import (
    dotted_name,
    receiver_name,
    registers_on_self,
)
from devlint.core.values import (
    BUFFER,
    CALL_RESULT,
    PARAMETER,
    PLAIN_ATTRIBUTE,
    REGISTERED_ON_SOME_PATHS,
    SCALAR_VALUE,
    UNKNOWN_VALUE,
    Kind,
    Origin,
    Value,
    accelerator_inside,
    is_state,
    placed_state,
)

_NEUTRAL_BASES = frozenset({"object", "ABC", "abc.ABC", "Generic", "typing.Generic"})
"""Bases that call none of a class's methods (``framework_base`` stays false)."""


class Classes(Part):
    """Class definitions and instantiation."""

    def __init__(self, state: AnalysisState) -> None:
        super().__init__(state)
        self._keeps_state: dict[tuple, tuple] = {}  # see `_holds_given_state`
        self._instances: dict[tuple, tuple[Value, list[Event]]] = {}  # see `_construct`

    def connect(self, *, expressions: EvaluatesExpressions, functions: RunsFunctions) -> None:
        self.expressions = expressions
        self.functions = functions

    def class_def(self, statement: cst.ClassDef, env: Env) -> Env:
        info = ClassInfo(statement, ClassKind.PLAIN)
        unknown_base = False
        for base in statement.bases:
            value = self.expressions.eval(base.value, env)
            if value.kind is Kind.CLASS and isinstance(value.ref, ClassInfo):
                parent = value.ref
                info.kind = parent.kind if info.kind is ClassKind.PLAIN else info.kind
                info.methods.update(parent.methods)
                info.attrs.update(parent.attrs)
                info.stateful = info.base_stateful = parent.stateful
                info.open_base = info.open_base or parent.open_base
                info.framework_base = info.framework_base or parent.framework_base
                continue
            elif value.kind is Kind.NAMESPACE and value.ref in torch_facts.MODULE_BASE_CLASSES:
                info.kind = ClassKind.MODULE
                continue
            elif value.kind is Kind.NAMESPACE and value.ref in torch_facts.DATASET_BASES:
                info.kind = ClassKind.DATASET
            elif value.kind is Kind.NAMESPACE and torch_api.nn_module(value.ref):
                info.kind = ClassKind.MODULE
                unknown_base = True  # `class TokenEmbedding(nn.Embedding)` owns its weight
                info.base_stateful = torch_api.nn_module(value.ref).stateful or None
                info.stateful = info.base_stateful
            elif base.keyword is None:
                unknown_base = True
                info.base_stateful = None
                info.open_base = info.open_base or self._may_be_module(base.value, value, env)
            if base.keyword is None and dotted_name(base.value) not in _NEUTRAL_BASES:
                info.framework_base = True
        for item in statement.body.body:
            if isinstance(item, cst.FunctionDef):
                info.methods[item.name.value] = FunctionInfo(
                    item, env, info, home=self.state.code_home()
                )
        if info.open_base and info.kind is ClassKind.PLAIN and _acts_as_module(info):
            info.kind = ClassKind.MODULE
        if info.kind is ClassKind.MODULE:  # what a plain mixin's __init__ set is registered too
            info.attrs = {name: _as_seen_inside(value) for name, value in info.attrs.items()}
        env.set(statement.name.value, Value(Kind.CLASS, ref=info))
        self.state.places_tensors |= info.kind is ClassKind.MODULE
        init = info.methods.get("__init__")
        if init is not None and init.owner is info:
            # as Python runs it: when something first needs the instance (a subclass, a
            # construction), or at the module's end, with the names defined later bound
            info.settle = partial(self._analyse_init, info, init, unknown_base)
            if self.state.home is None:
                self.state.unsettled.append(info)
        elif unknown_base:
            info.stateful = info.base_stateful or None
        elif init is None and info.kind is ClassKind.MODULE:
            info.stateful = info.base_stateful  # `class Identity(nn.Module)` owns nothing
        overrides = {name for name, method in info.methods.items() if method.owner is info}
        for method in info.methods.values():
            if method.owner is info and method is not init:
                self.functions.defer(method)
            elif method.owner is not info and _calls_hook(info, method, overrides):
                self.functions.defer(replace(method, owner=info))
        return env

    def _may_be_module(self, node: cst.BaseExpression, value: Value, env: Env) -> bool:
        """Whether a base the file does not define may be an ``nn.Module`` subclass.

        Only torch's own non-module classes, the standard library and builtins
        (``object``, ``Exception``) are known not to be; anything imported from
        elsewhere may be.
        """
        if isinstance(node, cst.Subscript):  # Generic[T], SomeBase[Config]
            return self._may_be_module(
                node.value, self.state.values.get(node.value, UNKNOWN_VALUE), env
            )
        if value.kind is Kind.NAMESPACE and isinstance(value.ref, str):
            root = value.ref.split(".", 1)[0]
            if root == "torch":
                return value.ref.startswith("torch.nn.")
            return root not in sys.stdlib_module_names
        unbound = isinstance(node, cst.Name) and env.get(node.value) is None
        if unbound and value.kind is Kind.UNKNOWN:
            return not hasattr(builtins, node.value)
        return value.kind is Kind.UNKNOWN

    def _analyse_init(self, info: ClassInfo, init: FunctionInfo, unknown_base: bool) -> None:
        self.functions.mark_analysed(init)
        receiver = Value(Kind.INSTANCE, ref=info)
        attrs, moved, splits = self._construct_attrs(init, None, receiver)
        _forget_assigned_elsewhere(info, attrs)
        info.placed = moved if moved is not None and _fixed(moved.device) else None
        info.moves_itself = moved is not None or any(
            is_state(value) and is_known(value.device) and value.device != CPU
            for value in attrs.values()
        )
        if info.kind is ClassKind.MODULE:
            info.stateful = _stateful(attrs.values(), info.stateful, unknown_base)
            for name, value in attrs.items():
                attrs[name] = _as_seen_inside(value)
        elif info.open_base:
            for name, value in attrs.items():
                attrs[name] = _movable_from_outside(value)
        info.attrs.update(attrs)
        info.flag_splits = _flag_splits(info, init, attrs, splits)

    def _construct_attrs(
        self, init: FunctionInfo, args: Args | None, receiver: Value
    ) -> tuple[dict[str, Value], Value | None, dict[str, Split]]:
        """Run ``__init__``; returns what it leaves on self, self when it moved self, and the
        attributes it set on each side of a flag of self (``binder.attribute_splits``)."""
        env = self.functions.bind_parameters(init, args, receiver)
        frame = self.functions.run_function(init, env)
        exit_env = None
        for path in frame.exits:
            exit_env = join_envs(exit_env, path)
        if exit_env is None:
            return {}, None, {}
        own = receiver_name(init.node) or "self"
        attrs = dict(attributes_of(exit_env, own))
        final_self = exit_env.bindings.get(own)
        moved = final_self is not None and is_known(final_self.device)
        return attrs, final_self if moved else None, attribute_splits(exit_env, own)

    def instantiate(self, info: ClassInfo, node: cst.Call, args: Args) -> Value:
        origin = Origin("created", node)
        if info.kind is ClassKind.MODULE:
            device = UNKNOWN if info.moves_itself else CPU
            if info.placed is not None:
                device, origin = info.placed.device, info.placed.origin or origin
            stateful, given = self._holds_given_state(info, args)
            if given is not None and info.placed is None and not info.moves_itself:
                device, origin = given  # built around modules placed already
            return Value(Kind.MODULE, device, origin, stateful=stateful, ref=info)
        instance = self._construct(info, args)
        if info.kind is ClassKind.DATASET:
            getitem = info.methods.get("__getitem__")
            item = UNKNOWN_VALUE
            if getitem is not None:
                item = self.functions.call_function(
                    getitem, Args(((node, SCALAR_VALUE),), {}), instance
                )
            device = accelerator_inside(item)
            return Value(
                Kind.DATASET, device or CPU, item.origin if device else origin, element=item
            )
        return instance

    def placed_instance(self, module: Value) -> Value:
        """``self`` for a method of a local module class called on ``module``: its
        submodules, parameters and buffers live where the module does."""
        info = module.ref
        device = module.device if is_known(module.device) else MODULE_DEVICE
        attrs = {name: placed_state(v, device, module.origin) for name, v in info.attrs.items()}
        keys, items = tuple(attrs), tuple(attrs.values())
        return Value(Kind.INSTANCE, device, module.origin, keys=keys, items=items, ref=info)

    def _holds_given_state(
        self, info: ClassInfo, args: Args
    ) -> tuple[bool | None, tuple[Device, Origin | None] | None]:
        """Whether ``Residual(Block())`` keeps the stateful module it is given, and where its
        state lives when that is not where it was created: a wrapper built around modules
        already placed (``Wrapper(net.to(device))``) is on their device (``UNKNOWN`` when
        its state is on several).

        A module class whose ``__init__`` stores an argument (``self.fn = fn``)
        owns state exactly when what it is given does: its ``__init__`` is run
        again with the arguments when one of them is a module known to own state
        or known not to (what ``__init__`` alone assumed of its parameters, e.g.
        that one typed ``nn.Module`` is a model, gives way to what it is given), and when
        it registers a buffer or parameter it may be given (``register_buffer("weight",
        weight)``: with no weight given, the buffer is ``None`` and holds no tensor).
        """
        given_modules = any(  # known to own state or not, or not known to be on the CPU
            (is_state(value) and (value.stateful is not None or value.device != CPU))
            or _placed_module_instance(value)
            for _, value in args.all()
        )
        if not given_modules and not _registers_what_it_is_given(info):
            return info.stateful, None
        init = info.methods.get("__init__")
        if init is None:
            return info.stateful, None
        if not self.functions.can_enter(init):  # what it keeps of the placed modules: unseen
            placed = any(_placed_module_instance(value) for _, value in args.all())
            return info.stateful, (UNKNOWN, None) if placed else None
        key = (id(init.node), args_signature(args))
        if key not in self._keeps_state:
            with self.state.recording() as recorded:
                attrs, _, _ = self._construct_attrs(init, args, Value(Kind.INSTANCE, ref=info))
            recorded.discard()  # the definition's own analysis reported its events
            unseen_base = info.base_stateful is None
            stateful = _stateful(attrs.values(), bool(info.base_stateful), unseen_base)
            self._keeps_state[key] = stateful, _state_device(attrs.values(), info)
        return self._keeps_state[key]

    def _construct(self, info: ClassInfo, args: Args) -> Value:
        init = info.methods.get("__init__")
        receiver = Value(Kind.INSTANCE, ref=info)
        if init is None or not self.functions.can_enter(init):
            return receiver
        key = (id(init.node), args_signature(args))
        cached = self._instances.get(key)
        if cached is not None:
            instance, events = cached
            self.state.replay(events)
            return replace(instance)  # another object: `a = Foo(); b = Foo()` are no aliases
        with self.state.recording() as recorded:
            attrs, _, _ = self._construct_attrs(init, args, receiver)
        _forget_assigned_elsewhere(info, attrs)
        merged = {**info.attrs, **attrs}
        instance = Value(Kind.INSTANCE, ref=info, keys=tuple(merged), items=tuple(merged.values()))
        self._instances[key] = (instance, recorded.events)
        return instance


def _calls_hook(info: ClassInfo, method: FunctionInfo, overrides: set[str]) -> bool:
    """A base's method (``forward``) calling a hook this module class fills in: it is run
    again with this class's attributes."""
    return info.kind is ClassKind.MODULE and bool(method.calls_on_self & overrides)


def _state_device(attrs, info: ClassInfo) -> tuple[Device, Origin | None] | None:
    """Where the state ``__init__`` kept lives, when given modules put all of it off the CPU
    (state it created itself stays on the CPU: the module is then split, and any input
    meets some of it on another device, as the CPU default says)."""
    state = [
        v for v in attrs if (is_state(v) and v.stateful is not False) or _placed_module_instance(v)
    ]
    devices = {v.device for v in state} | ({CPU} if info.base_stateful else set())
    if not state or CPU in devices:
        return None
    if len(devices) > 1:
        return UNKNOWN, None
    return state[0].device, state[0].origin


def _placed_module_instance(value: Value) -> bool:
    """An instance of a module class of the project that the code placed somewhere."""
    return (
        value.kind is Kind.INSTANCE
        and isinstance(value.ref, ClassInfo)
        and value.ref.kind is ClassKind.MODULE
        and value.device is not None
        and is_known(value.device)
        and value.device != CPU
    )


def _registers_what_it_is_given(info: ClassInfo) -> bool:
    """A buffer or parameter from no creation ``__init__`` shows: maybe an argument."""
    return bool(info.stateful) and any(
        value.ref in (PARAMETER, BUFFER) and value.origin is None for value in info.attrs.values()
    )


def _acts_as_module(info: ClassInfo) -> bool:
    """Whether a class behaves as an ``nn.Module``: it defines ``forward`` or registers state."""
    return "forward" in info.methods or any(
        registers_on_self(method.node) for method in info.methods.values()
    )


def _movable_from_outside(value: Value) -> Value:
    """An attribute of a class whose base is not in the file, as its methods see it.

    If that base is an ``nn.Module``, its ``.to()`` moves the submodules,
    parameters and buffers ``__init__`` set: where they are is unknown.
    """
    return value.with_device(UNKNOWN, None) if is_state(value) else value


def _as_seen_inside(value: Value) -> Value:
    """An attribute as a module's own methods see it.

    Submodules, parameters and buffers are on the module's device, wherever it
    goes. Plain cpu tensors, and modules kept in plain lists or dicts, stay
    where ``__init__`` made them: ``.to()`` does not move them.
    """
    if is_state(value):
        return value.with_device(MODULE_DEVICE, None)
    if value.ref == REGISTERED_ON_SOME_PATHS:
        return value.with_device(UNKNOWN, None)
    if value.kind is Kind.TENSOR and value.device == CPU and value.origin is not None:
        verb = "a plain attribute, not a registered buffer, created"
        return value.with_device(CPU, Origin(verb, value.origin.node, tag=PLAIN_ATTRIBUTE))
    if value.kind in (Kind.SEQUENCE, Kind.MAPPING):
        items = tuple(_unregistered_module(item) for item in value.items or ())
        element = _unregistered_module(value.element) if value.element is not None else None
        return replace(value, items=items or value.items, element=element)
    return value


def _unregistered_module(value: Value) -> Value:
    if value.kind is not Kind.MODULE or value.device != CPU or value.origin is None:
        return value
    verb = "kept in a plain list or dict, not an nn.ModuleList/ModuleDict, created"
    return value.with_device(CPU, Origin(verb, value.origin.node, tag=PLAIN_ATTRIBUTE))


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


def _flag_splits(
    info: ClassInfo, init: FunctionInfo, attrs: dict[str, Value], splits: dict[str, Split]
) -> dict[str, Split]:
    """The splits other methods may take back: on flags no other method rebinds, of
    attributes they see as ``__init__`` left them, with each side as they would see it."""
    if not splits:
        return {}
    own = receiver_name(init.node) or "self"
    assigned = _assigned_elsewhere(info)[0]
    found = {}
    for name, split in splits.items():
        flag_attributes = {n.removeprefix(own + ".").split(".")[0] for n in split.names}
        if name in assigned or flag_attributes & assigned or attrs.get(name) is None:
            continue
        sides = (split.when_true, split.when_false)
        if info.kind is ClassKind.MODULE:
            sides = tuple(_as_seen_inside(side) for side in sides)
        elif info.open_base:
            sides = tuple(_movable_from_outside(side) for side in sides)
        found[name] = replace(split, when_true=sides[0], when_false=sides[1], joined=attrs[name])
    return found


def _forget_assigned_elsewhere(info: ClassInfo, attrs: dict[str, Value]) -> None:
    """Attributes other methods reassign (or move, unless tensors) are unknown elsewhere.

    A module's own ``to()``/``cuda()`` override that moves a tensor attribute
    (``self.scale = self.scale.to(device)``) makes it follow the module, as a
    buffer does.
    """
    assigned, moved, follows = _assigned_elsewhere(info)
    for name in assigned:
        attrs[name] = UNKNOWN_VALUE
    for name in moved:
        if attrs.get(name, UNKNOWN_VALUE).kind is not Kind.TENSOR:
            attrs[name] = UNKNOWN_VALUE
    for name in follows - assigned:
        value = attrs.get(name, UNKNOWN_VALUE)
        module = info.kind is ClassKind.MODULE and value.kind is Kind.TENSOR
        attrs[name] = replace(value, ref=BUFFER) if module else UNKNOWN_VALUE


def _assigned_elsewhere(info: ClassInfo) -> tuple[set[str], set[str], set[str]]:
    """Attributes of self that methods other than ``__init__`` assign, that they move, and
    that a ``to()``/``cuda()`` override moves along with the module."""
    assigned: set[str] = set()
    moved: set[str] = set()
    follows: set[str] = set()
    for name, method in info.methods.items():
        if name == "__init__" or name in info.built_by:
            continue
        for statement, attribute in method.statements_on_self:
            if isinstance(statement, cst.Expr):
                moved.add(attribute)
            elif not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
                assigned.add(attribute)
            elif _is_itself(statement.value, statement.targets[0].target):
                continue  # `self.a = self.a` changes nothing
            elif name in torch_facts.MODULE_MOVE_OVERRIDES and _moves_itself(statement):
                follows.add(attribute)
            else:
                assigned.add(attribute)
    return assigned - _reinitialised(info, assigned), moved, follows


def _reinitialised(info: ClassInfo, assigned: set[str]) -> set[str]:
    """Attributes other methods only set again as ``__init__`` did (``load()`` doing
    ``self.target = copy.deepcopy(self.net)`` again): they hold what ``__init__`` left,
    provided the expression reads no attribute that is reassigned."""
    init = info.methods.get("__init__")
    if init is None or not assigned:
        return set()
    initial: dict[str, list[cst.BaseExpression]] = {}
    for statement, attribute in init.statements_on_self:
        if attribute in assigned and isinstance(statement, cst.Assign):
            initial.setdefault(attribute, []).append(statement.value)
    again: set[str] = set()
    for name, method in info.methods.items():
        if name == "__init__":
            continue
        for statement, attribute in method.statements_on_self:
            if attribute not in initial or isinstance(statement, cst.Expr):
                continue
            if isinstance(statement, cst.Assign) and any(
                statement.value.deep_equals(value) for value in initial[attribute]
            ):
                again.add(attribute)
            else:
                del initial[attribute]
    return {
        attribute
        for attribute in again & initial.keys()
        if not _attributes_read(initial[attribute]) & assigned
    }


def _attributes_read(values: list[cst.BaseExpression]) -> set[str]:
    """The ``<name>.<attribute>`` attributes expressions read (``self.net`` → ``net``)."""
    found: set[str] = set()
    pending: list[cst.CSTNode] = list(values)
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            found.add(node.attr.value)
        pending.extend(node.children)
    return found


def _fixed(device: Device) -> bool:
    """A device that does not depend on the caller: a literal one, or cuda when available."""
    return isinstance(device, Concrete) or device is MAYBE_ACCEL


def _moves_itself(statement: cst.Assign) -> bool:
    """``self.a = self.a.to(device)``."""
    value = statement.value
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in torch_facts.MODULE_MOVE_OVERRIDES
        and _is_itself(value.func.value, statement.targets[0].target)
    )


def _is_itself(value: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    name = dotted_name(target)
    return name is not None and dotted_name(value) == name
