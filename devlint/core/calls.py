"""Calls: which call is which (torch API, local code, methods, modules, wrappers, builtins),
and the events calls cause; what torch returns is ``torch_model``'s."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from functools import cached_property, partial

import libcst as cst

from devlint.core import distributions, torch_api, torch_facts, torch_model
from devlint.core.binder import Env
from devlint.core.collectives import distributed_event, launcher_backend
from devlint.core.device_defaults import unpassed_device_parameters
from devlint.core.events import (
    CheckpointLoad,
    DeviceDefaultKept,
    HostConversion,
    LoaderCreated,
    ModuleCall,
    Operand,
    SequencePacked,
    TensorMoved,
)
from devlint.core.lattice import (
    CPU,
    MODULE_DEVICE,
    UNKNOWN,
    Concrete,
    Device,
    Symbol,
    can_be_accelerator,
    is_hard_coded_accelerator,
    is_known,
    is_placed,
)
from devlint.core.roles import (
    EvaluatesExpressions,
    RunsClasses,
    RunsFunctions,
    RunsStatements,
    TracksWrappers,
)
from devlint.core.scopes import Args, ClassInfo, ClassKind, FunctionInfo
from devlint.core.state import Part
from devlint.core.syntax import (
    decorated_with,
    descendants,
    dotted_name,
    is_device_name,
    is_rank_name,
    last_name,
    string_value,
)
from devlint.core.torch_api import CallKind, CallSpec
from devlint.core.values import (
    ASYNC_COPY,
    AVAILABILITY_VALUE,
    BUFFER,
    CALL_RESULT,
    FROZEN,
    PARAMETER,
    SCALAR_VALUE,
    UNKNOWN_VALUE,
    Kind,
    Marker,
    Origin,
    Value,
    accelerator_inside,
    element_of,
    is_tensor_like,
    join_all,
    parts,
    used_as_module,
)

_SEARCH_PATH_EDITS = {"sys.path.append": 0, "sys.path.insert": 1}  # -> where the folder is
GIVEN_A_DEVICE = Marker("given a device")  # ``ref`` of ``functools.partial(f, device=d)``
_BUILTINS = frozenset(
    {
        "enumerate",
        "zip",
        "iter",
        "next",
        "list",
        "tuple",
        "range",
        "len",
        "isinstance",
        "print",
        "reversed",
        "sorted",
        "dict",
        "set",
        "min",
        "max",
        "sum",
        "abs",
        "float",
        "int",
        "str",
        "bool",
        "super",
        "getattr",
        "hasattr",
        "type",
        "repr",
        "round",
    }
)
_DATA_METHODS = frozenset({"items", "values", "keys", "get", "pop"})


def _availability(node: cst.Call, args: Args) -> Value | None:
    """``use_cuda = torch.cuda.is_available()``: a guard the flow can split on."""
    return AVAILABILITY_VALUE if not node.args else None


def _parameter(node: cst.Call, args: Args) -> Value:
    data = args.get(0, "data")
    value = data[1] if data else UNKNOWN_VALUE
    return Value(Kind.TENSOR, value.device, value.origin, value.ndim, ref=PARAMETER)


def _dataset_of_tensors(node: cst.Call, args: Args) -> Value:
    devices = [value for _, value in args.positional if is_tensor_like(value)]
    item = join_all(devices) if devices else Value(Kind.TENSOR, CPU)
    return Value(Kind.DATASET, item.device, item.origin)


def _distribution(qualname: str, node: cst.Call, args: Args) -> Value | None:
    if not distributions.is_distribution(qualname):
        return None
    return distributions.construct(qualname, args)


def _torchvision_model(qualname: str, node: cst.Call, args: Args) -> Value | None:
    """``torchvision.models.resnet18()`` and the like (a lower-case builder, not a class)."""
    if not (qualname.startswith("torchvision.models.") and qualname[19:20].islower()):
        return None
    return Value(Kind.MODULE, CPU, Origin("created", node), stateful=True)


def _optimizer(qualname: str, node: cst.Call, args: Args) -> Value | None:
    return Value(Kind.OPTIMIZER) if torch_api.is_optimizer(qualname) else None


def _pass_through(qualname: str, node: cst.Call, args: Args) -> Value | None:
    """``iter(x)``, ``tqdm(x)``: what they are given."""
    if qualname not in torch_facts.PASS_THROUGH:
        return None
    return torch_model.builtin_result("iter", args)


def _torch_cuda_call(qualname: str, node: cst.Call, args: Args) -> Value | None:
    """``torch.cuda.LongTensor(...)`` is a GPU tensor; other ``torch.cuda`` calls give numbers."""
    if not qualname.startswith("torch.cuda."):
        return None
    if qualname.replace(".cuda", "", 1) in torch_facts.LEGACY_CONSTRUCTORS:
        return Value(Kind.TENSOR, Concrete("cuda"), Origin("created", node))
    return SCALAR_VALUE


class Calls(Part):
    """Knows what calls do to devices; local functions and classes run in ``Functions``
    and ``Classes``."""

    def connect(
        self,
        *,
        expressions: EvaluatesExpressions,
        wrappers: TracksWrappers,
        flow: RunsStatements,
        functions: RunsFunctions,
        classes: RunsClasses,
    ) -> None:
        self.expressions = expressions
        self.wrappers = wrappers
        self.flow = flow
        self.functions = functions
        self.classes = classes

    # -- dispatch -------------------------------------------------------------

    def call(self, node: cst.Call, env: Env) -> Value:
        if self.state.code_home() is not None:
            return self._dispatch(node, env)
        self.state.home_calls.append((node, self.flow.function))  # where other files' code runs
        try:
            return self._dispatch(node, env)
        finally:
            self.state.home_calls.pop()

    def _dispatch(self, node: cst.Call, env: Env) -> Value:
        func = node.func
        name = last_name(func)
        if name == "synchronize":
            self.synchronize(env)
        elif name == "set_device":
            self.state.sets_cuda_device = True
        elif name == "set_start_method" and node.args:
            method = string_value(node.args[0].value)
            self.state.spawn_start_method |= method in ("spawn", "forkserver")
        elif name in torch_facts.OFFLOAD_HOOKS and node.args:
            self.offloaded(node.args[0].value, env)
        elif name in torch_facts.OFFLOAD_METHODS and isinstance(func, cst.Attribute):
            self.offloaded(func.value, env)
        if isinstance(func, cst.Attribute):
            receiver = self.expressions.eval(func.value, env)
            if receiver.kind is Kind.PROJECT_MODULE:  # `utils.to_device(batch)`
                callee = self.expressions.attribute_of(receiver, func.attr.value, func)
            elif receiver.kind is Kind.NAMESPACE:
                callee = self.namespace(f"{receiver.ref}.{func.attr.value}")
            else:
                args = self.arguments(node, env)
                return self.method_call(node, func, receiver, func.attr.value, args, env)
            self.state.values[func] = callee
        else:
            callee = self.expressions.eval(func, env)
        if _sets_up_distributed(name) and _outside_the_file(callee):
            self.state.sets_cuda_device = True  # a helper we cannot see: it may call set_device
        args = self.arguments(node, env)
        if callee.kind is Kind.FUNCTION and isinstance(callee.ref, FunctionInfo):
            self.note_kept_device_defaults(node, callee.ref, args, False, env)
        if _outside_the_file(callee):
            launched = launcher_backend(node, args)  # `dispatch.run(..., backend="gloo")`
            if launched is not None:
                self.state.record(launched)
        return self.call_value(node, callee, args)

    def offloaded(self, model: cst.BaseExpression, env: Env) -> None:
        """A hook now moves the model's weights at call time: where they are is unknown."""
        path = dotted_name(model)
        value = env.get(path) if path is not None else None
        if value is not None:
            env.update(path, value.with_device(UNKNOWN, None))

    def synchronize(self, env: Env) -> None:
        """A synchronisation point: pending device-to-host copies are complete."""
        for name, value in list(env.bindings.items()):
            settled = torch_model.settled(value)
            if settled is not value:
                env.bindings[name] = settled

    def call_value(self, node: cst.Call, callee: Value, args: Args) -> Value:
        """Call whatever ``callee`` is: torch API, local function or class, module, builtin."""
        kind = callee.kind
        if kind is Kind.NAMESPACE or (kind is Kind.FUNCTION and isinstance(callee.ref, str)):
            for expression, value in args.all():
                self.expressions.read(expression, value)
        if kind is Kind.NAMESPACE:
            return self.qualified_call(callee.ref, node, args)
        if kind is Kind.FUNCTION and isinstance(callee.ref, FunctionInfo):
            return self.functions.call_function(callee.ref, args, None)
        if kind is Kind.FUNCTION and isinstance(callee.ref, str):
            return torch_model.builtin_result(callee.ref, args)
        if kind is Kind.CLASS and isinstance(callee.ref, ClassInfo):
            return self.classes.instantiate(callee.ref, node, args)
        if kind is Kind.MODULE:
            return self.module_call(node, callee, args)
        if kind is Kind.INSTANCE and _is_module_class(callee.ref):  # `self(x)` in a module method
            device = callee.device if is_known(callee.device) else MODULE_DEVICE
            module = Value(Kind.MODULE, device, callee.origin, stateful=callee.ref.stateful)
            return self.module_call(node, module, args)
        if kind is Kind.WRAPPER:
            return self.wrappers.wrapper_call(node, callee, args)
        if kind is Kind.UNKNOWN and is_known(callee.device):
            # something moved to a device and then called is a model: it computes there
            return Value(Kind.TENSOR, callee.device, callee.origin, 1)
        return Value(Kind.UNKNOWN, ref=CALL_RESULT)

    def arguments(self, node: cst.Call, env: Env) -> Args:
        positional = []
        keywords = {}
        unpacked = []
        for arg in node.args:
            value = self.expressions.eval(arg.value, env)
            if arg.star:
                unpacked.append((arg.star, arg.value, value))
            elif arg.keyword is not None:
                keywords[arg.keyword.value] = (arg.value, value)
            else:
                positional.append((arg.value, value))
        return Args(tuple(positional), keywords, bool(unpacked), tuple(unpacked))

    def _note_search_folder(self, given: tuple[cst.BaseExpression, Value] | None) -> None:
        """``sys.path.append("core")`` in the file's own code: its later imports look there."""
        folder = string_value(given[0]) if given is not None else None
        own_code = self.state.code_home() is self.state.home
        if folder and own_code and not os.path.isabs(folder) and not folder.startswith("~"):
            self.state.search_folders.append(os.path.normpath(folder))

    def namespace(self, qualname: str) -> Value:
        return Value(Kind.NAMESPACE, ref=qualname)

    def builtin(self, name: str) -> Value | None:
        return Value(Kind.FUNCTION, ref=name) if name in _BUILTINS else None

    # -- devices ----------------------------------------------------------------

    def device_argument(self, node: cst.BaseExpression, value: Value) -> Device | None:
        """The device an argument denotes; None when it denotes no device (a dtype)."""
        if value.kind in (Kind.DEVICE, Kind.STRING) and is_known(value.device):
            return value.device
        if is_tensor_like(value):
            return value.device
        if value.kind is Kind.DTYPE:
            return None
        if value.kind is Kind.STRING:  # `p.device.type`, a config string: a device we cannot read
            return UNKNOWN
        if value.kind is Kind.SCALAR and isinstance(value.ref, int):
            return Concrete("cuda", value.ref)
        name = dotted_name(node)
        if name is None:
            return UNKNOWN
        if self.state.code_home() is not None:  # another file's names name nothing here
            return None if "dtype" in name.lower() or name.startswith("torch.") else UNKNOWN
        if is_rank_name(name):
            return Symbol(name)  # this process's GPU: cuda:<rank>
        if is_device_name(name, self.state.device_names):
            self.state.runtime_device = True
            return Symbol(name)
        if "dtype" in name.lower() or name.startswith("torch."):
            return None
        return UNKNOWN

    def device_keyword(self, args: Args) -> Device | None:
        """The ``device=`` a call is given: spelt out, or in a ``**mapping`` (``torch.rand(n,
        **kwargs)`` with ``kwargs = {"device": x.device}``; the ``**factory_kwargs`` of
        torch's own modules). A mapping whose keys are unknown may hold one: unknown."""
        given = args.keywords.get("device")
        if given is None:
            given = self._device_in_mappings(args)
        if given is UNKNOWN:
            return UNKNOWN
        if given is None:
            return None
        self.state.places_tensors = True
        device = self.device_argument(*given)
        return UNKNOWN if device is None else device

    def _device_in_mappings(self, args: Args) -> tuple[cst.BaseExpression, Value] | Device | None:
        for star, node, value in args.unpacked:
            if star != "**":
                continue
            if value.keys is None or value.items is None:
                return UNKNOWN  # a mapping whose keys are unknown may hold `device`
            if "device" in value.keys:
                return node, value.items[value.keys.index("device")]
        return None

    def torch_device(self, node: cst.Call, args: Args) -> Value:
        """``torch.device("cuda", 1)``, ``torch.device(name)``, ``torch.device(f"cuda:{r}")``."""
        first = args.get(0, "type")
        if first is None:
            return Value(Kind.DEVICE, UNKNOWN)
        device = self.device_argument(*first)
        index = args.get(1, "index")
        if isinstance(device, Concrete) and index is not None:
            number = index[1].ref
            device = Concrete(device.type, number if isinstance(number, int) else None)
            chosen = self.device_argument(*index) if device.type == "cuda" else None
            if device.index is None and isinstance(chosen, Symbol):  # ("cuda", local_rank)
                device = replace(chosen, gpu=True)  # a GPU whatever it holds, as `.cuda(rank)`
        if device is None:
            device = UNKNOWN
        return Value(Kind.DEVICE, device, Origin("set", node))

    # -- torch functions and classes ----------------------------------------------

    def qualified_call(self, qualname: str, node: cst.Call, args: Args) -> Value:
        """What a call of a function named through its import does: the notes any such
        call leaves, then the handler of its exact name, else of its family."""
        self._note_call(qualname, node, args)
        handler = self._named_handlers.get(qualname)
        if handler is not None:
            value = handler(node, args)
            if value is not None:
                return value
        for family in self._family_handlers:
            value = family(qualname, node, args)
            if value is not None:
                return value
        return Value(Kind.UNKNOWN, ref=CALL_RESULT)

    def _note_call(self, qualname: str, node: cst.Call, args: Args) -> None:
        """What a call tells about the file whatever it returns: folders added to the
        search path, a device chosen at run time, collectives, process groups, saves."""
        if qualname in _SEARCH_PATH_EDITS:
            self._note_search_folder(args.get(_SEARCH_PATH_EDITS[qualname]))
        if qualname in torch_facts.RUNTIME_DEVICE_CHECKS:
            self.state.runtime_device = True
        distributed = distributed_event(qualname, node, args)
        if distributed is not None:
            self.state.record(distributed)
        self.wrappers.note_checkpoint(qualname, node, args)

    @cached_property
    def _named_handlers(self) -> dict[str, Callable[[cst.Call, Args], Value | None]]:
        """The handler of each name with one; None from a handler: ask the families."""
        handlers: dict[str, Callable[[cst.Call, Args], Value | None]] = {
            "torch.device": self.torch_device,
            "functools.partial": self._partial,
            "torch.nn.Parameter": _parameter,
            "torch.nn.parameter.Parameter": _parameter,
            "torch.nn.utils.rnn.pack_padded_sequence": self._pack_padded_sequence,
        }
        for name in torch_facts.CUDA_AVAILABILITY:
            handlers[name] = _availability
        for name in torch_facts.TENSOR_FROM_DATA:
            handlers[name] = partial(self._tensor_from_data, name)
        for name in torch_facts.LOADERS:
            handlers[name] = self.data_loader
        for name in torch_facts.CHECKPOINT_LOADS:
            handlers[name] = self._checkpoint_load
        for name in torch_facts.NUMPY_CONVERSIONS:
            handlers[name] = self._numpy_conversion
        for name in torch_facts.GRADIENTS:
            handlers[name] = lambda node, args: torch_model.gradients(args)
        for name in torch_facts.DATASETS_OF_TENSORS:
            handlers[name] = _dataset_of_tensors
        for name in torch_facts.WRAPPERS:
            handlers[name] = partial(self.wrappers.wrap, name)
        for name in torch_facts.MODULE_CONTAINERS:
            handlers[name] = torch_model.module_container
        return handlers

    @cached_property
    def _family_handlers(self) -> tuple[Callable[[str, cst.Call, Args], Value | None], ...]:
        """Handlers of names that share a prefix or a table, asked in this order; each
        returns None for a name not its own."""
        return (
            _distribution,
            _torchvision_model,
            self._nn_module,
            _optimizer,
            self._torch_function,
            _pass_through,
            _torch_cuda_call,
        )

    def _tensor_from_data(self, qualname: str, node: cst.Call, args: Args) -> Value:
        device = self.device_keyword(args)
        return torch_model.tensor_from_data(qualname, node, args, device)

    def _partial(self, node: cst.Call, args: Args) -> Value | None:
        if self._given_a_device(node):
            return Value(Kind.UNKNOWN, ref=GIVEN_A_DEVICE)  # `partial(collate, device=device)`
        return None

    def _checkpoint_load(self, node: cst.Call, args: Args) -> Value:
        given = args.get(1, "map_location") is not None
        self.state.record(CheckpointLoad(node, given, self.flow.function))
        return Value(Kind.UNKNOWN, ref=CALL_RESULT)

    def _pack_padded_sequence(self, node: cst.Call, args: Args) -> None:
        given = args.get(*torch_facts.HOST_ARGUMENTS["torch.nn.utils.rnn.pack_padded_sequence"])
        if given is not None and is_tensor_like(given[1]):
            self.state.record(SequencePacked(node, Operand(*given)))

    def _numpy_conversion(self, node: cst.Call, args: Args) -> Value:
        given = args.get(0, "object") or args.get(0, "a")
        if given is not None and is_tensor_like(given[1]):
            self.state.record(HostConversion(node, Operand(*given)))
        return Value(Kind.UNKNOWN, ref=CALL_RESULT)

    def _nn_module(self, qualname: str, node: cst.Call, args: Args) -> Value | None:
        """A torch layer or loss: where the tensors it is given live (a loss weight and the
        like: buffers that stay where they were made), else its ``device=``, else the cpu."""
        module = torch_api.nn_module(qualname)
        if module is None:
            return None
        held = [value for _, value in args.all() if is_tensor_like(value)]
        if held:
            state = join_all(held)
            return Value(
                Kind.MODULE, state.device, state.origin, state.ndim, stateful=True, ref=qualname
            )
        device = self.device_keyword(args)  # nn.Linear(4, 4, device=device)
        origin = (
            torch_model.creation_origin(node, args)
            if device is not None
            else Origin("created", node)
        )
        return Value(Kind.MODULE, device or CPU, origin, stateful=module.stateful, ref=qualname)

    def _torch_function(self, qualname: str, node: cst.Call, args: Args) -> Value | None:
        spec = torch_api.torch_function(qualname)
        if spec is None:
            return None
        return self.apply_spec(spec, qualname.rsplit(".", 1)[-1], node, args, None)

    def data_loader(self, node: cst.Call, args: Args) -> Value:
        """A DataLoader yields cpu batches unless its dataset visibly holds device tensors, or
        its ``collate_fn`` is given a device (``partial(collate, device=device)`` moves
        every batch): then where they are is unknown."""
        loader = Value(Kind.LOADER, CPU, Origin("created", node))
        collate = args.get(6, "collate_fn")
        if collate is not None and (
            collate[1].ref is GIVEN_A_DEVICE or self._given_a_device(collate[0])
        ):
            loader = Value(Kind.LOADER, UNKNOWN)
        for source in (args.get(0, "dataset"), collate):
            if source is None or loader.device is UNKNOWN:
                continue
            value = source[1]
            if value.kind is Kind.FUNCTION and isinstance(value.ref, FunctionInfo):
                value = self.functions.call_function(value.ref, Args((), {}), None)
            device = accelerator_inside(value)
            if device is not None:
                loader = Value(Kind.LOADER, device, _first_origin(value) or loader.origin)
                break
        pin = args.get(7, "pin_memory")
        workers = args.get(5, "num_workers")
        context = args.get(-1, "multiprocessing_context")
        self.state.record(
            LoaderCreated(
                node,
                loader,
                pin_memory=pin is not None and _is_true(pin[0]),
                workers=_literal_int(workers, default=0),
                spawn=context is not None and string_value(context[0]) in ("spawn", "forkserver"),
            )
        )
        return loader

    def _given_a_device(self, node: cst.CSTNode) -> bool:
        """Whether an expression passes a device along (a ``device=``/``map_location=``
        argument, or any part that is a device): a collate function it makes may move
        batches."""
        for part in (node, *descendants(node)):
            keyword = part.keyword if isinstance(part, cst.Arg) else None
            if keyword is not None and keyword.value in ("device", "map_location"):
                return True
            value = self.state.values.get(part)
            if value is not None and value.kind is Kind.DEVICE:
                return True
        return False

    def apply_spec(
        self,
        spec: CallSpec,
        name: str,
        node: cst.Call,
        args: Args,
        receiver: tuple[cst.BaseExpression, Value] | None,
    ) -> Value:
        """What a torch function or tensor method described by the API table returns;
        the tensors an op combines meet there."""
        operands: list[Operand] = []
        if name in torch_model.COMPARISONS and spec.kind is CallKind.NON_TENSOR:
            compared = torch_model.COMPARISONS[name][1 if receiver is not None else 0]
            self.expressions.meet(
                node, name, torch_model.tensor_operands(compared, args, receiver), False
            )
            return SCALAR_VALUE
        if spec.kind not in (CallKind.FACTORY, CallKind.NON_TENSOR):  # these read no tensors
            operands = torch_model.tensor_operands(spec, args, receiver)
        if spec.kind is CallKind.COMBINE:
            self.expressions.meet(node, name, operands, spec.strict)
        device = self.device_keyword(args) if torch_model.takes_device(spec, args) else None
        return torch_model.spec_result(spec, name, node, args, operands, device)

    # -- methods ----------------------------------------------------------------

    def method_call(
        self, node: cst.Call, func: cst.Attribute, receiver: Value, name: str, args: Args, env: Env
    ) -> Value:
        kind = receiver.kind
        if name in torch_api.moves() and kind not in (Kind.STRING, Kind.DEVICE, Kind.SEQUENCE):
            return self.move(node, func.value, receiver, name, args, env)
        if name == "type_as" and is_tensor_like(receiver):  # `self.to(other.options())`
            return self.move(node, func.value, receiver, "to", args, env)
        if kind is Kind.UNKNOWN and name in torch_facts.MODULE_ONLY_METHODS:  # an imported model
            receiver, kind = used_as_module(receiver), Kind.MODULE
            self.rebind(func.value, receiver, env)
        if kind is Kind.INSTANCE and isinstance(receiver.ref, ClassInfo):
            if name in torch_facts.REGISTRATIONS:
                return self.register(func.value, name, args, env)
            method = receiver.ref.methods.get(name)
            if _is_forward(receiver, method) and not self.functions.can_enter(method):
                return self.module_call(node, as_module(receiver), args)  # `self.forward(x)`
            if method is not None:
                self.note_kept_device_defaults(node, method, args, True, env)
                if self._constructing(receiver.ref, name):
                    return self.functions.call_in_place(method, args, func.value, env)
                return self.functions.call_function(method, args, receiver)
            if _is_module_class(receiver.ref) and torch_model.returns_the_module(name):
                return receiver  # `model = self.eval()`: nn.Module's own, returning self
            if _is_module_class(receiver.ref) and name in torch_facts.TENSORS_OF_A_MODULE:
                return torch_model.module_method(_as_placed_module(receiver), name)
            callee = self.expressions.attribute_of(receiver, name, func)
            self.state.values[func] = callee
            if _is_module_class(receiver.ref) and callee.kind is Kind.UNKNOWN:
                computed = _computed_by_a_part(node, callee, args)
                if computed is not None:
                    return computed
            return self.call_value(node, callee, args)
        if kind is Kind.CLASS and isinstance(receiver.ref, ClassInfo):
            method = receiver.ref.methods.get(name)
            if method is not None:  # `Model.post_process(boxes)`: a method through its class
                through = receiver if decorated_with(method.node, "classmethod") else None
                return self.functions.call_function(method, args, through)
        if kind is Kind.DISTRIBUTION:
            self.expressions.meet(node, name, distributions.operands(receiver, name, args), False)
            return distributions.result(receiver, name) or Value(Kind.UNKNOWN, ref=CALL_RESULT)
        from_loader = receiver.origin is not None and receiver.origin.from_loader
        if from_loader and name in _DATA_METHODS:
            return torch_model.container_method(
                receiver.with_device(receiver.device, receiver.origin), name
            )
        if is_tensor_like(receiver):
            self.expressions.read(func.value, receiver)
            return self.tensor_method(node, func.value, receiver, name, args, env)
        if kind is Kind.WRAPPER and name == "state_dict":
            return self.wrappers.wrapper_state_dict(node, func.value)
        if kind is Kind.WRAPPER and not torch_api.is_wrapper_attribute(name):
            return self.call_value(
                node, self.wrappers.wrapper_attribute(receiver, name, func), args
            )
        if (
            kind is Kind.MODULE
            and receiver.ref == torch_facts.MODULE_DICT
            and name not in torch_facts.MODULE_DICT_API
        ):
            return self.call_value(node, element_of(receiver), args)  # self.transformer.wpe(p)
        if kind is Kind.MODULE and name == "load_state_dict":
            self.wrappers.note_state_dict_load(node, func.value, receiver)
        if kind is Kind.MODULE and _is_module_class(receiver.ref):
            method = receiver.ref.methods.get(name)
            if method is not None and _runs_on_the_instance(method.node, receiver.device):
                return self.functions.call_function(
                    method, args, self.classes.placed_instance(receiver)
                )
        if kind in (Kind.MODULE, Kind.WRAPPER):
            return self.module_method(node, receiver, name, args)
        if kind in (Kind.BATCH, Kind.MAPPING) and name in _DATA_METHODS:
            return torch_model.container_method(receiver, name)
        return Value(Kind.UNKNOWN, ref=CALL_RESULT)

    def _constructing(self, info: ClassInfo, name: str) -> bool:
        """Whether ``self.<name>()`` is a construction helper called by ``__init__`` now."""
        init = info.methods.get("__init__")
        return init is not None and self.flow.function is init.node and info.builds_with(name)

    def register(self, receiver_node: cst.BaseExpression, name: str, args: Args, env: Env) -> Value:
        """``self.register_buffer("mask", t)`` binds ``self.mask`` to a buffer; a buffer
        registered as ``None`` (``register_buffer("weight", weight)`` with no weight given)
        holds nothing that ``Module.to()`` moves or that must share an input's device."""
        label = args.get(0, "name")
        keywords = torch_facts.REGISTERED_KEYWORDS[name]
        given = args.get(1) or next(
            (args.keywords[k] for k in keywords if k in args.keywords), None
        )
        owner = dotted_name(receiver_node)
        attribute = string_value(label[0]) if label else None
        if owner is not None and attribute is not None and given is not None:
            value = given[1]
            registers_a_tensor = name in ("register_buffer", "register_parameter")
            if registers_a_tensor and value.kind is not Kind.NONE:
                value = Value(
                    Kind.TENSOR,
                    value.device,
                    value.origin,
                    value.ndim,
                    ref=BUFFER if name == "register_buffer" else PARAMETER,
                )
            env.set(f"{owner}.{attribute}", value)
        return SCALAR_VALUE

    def move(
        self,
        node: cst.Call,
        receiver_node: cst.BaseExpression,
        receiver: Value,
        name: str,
        args: Args,
        env: Env,
    ) -> Value:
        """``.to()``/``.cuda()``/``.cpu()``: modules move in place, tensors get a copy.

        A bare-statement move of a batch or of something unknown is rebound by
        the statement walker, which knows it is a statement.
        """
        target, subject = self.move_target(name, args)
        self.state.places_tensors |= target != CPU  # host-side code only ever calls `.cpu()`
        if name != "to" or not _is_true_keyword(args, "non_blocking"):
            self.synchronize_if_blocking(receiver, env)
        if target is None:
            return receiver
        verb = "moved to {}" if subject is not None else f"moved to {target.describe()}"
        tag = None
        if (
            target == CPU
            and can_be_accelerator(receiver.device)
            and _is_true_keyword(args, "non_blocking")
        ):
            verb, tag = "copied to cpu with `non_blocking=True`", ASYNC_COPY
        moved = receiver.with_device(target, Origin(verb, node, subject, tag))
        if receiver.kind is Kind.TENSOR:
            self.state.record(TensorMoved(node, Operand(receiver_node, receiver), moved))
        if receiver.kind in (Kind.MODULE, Kind.WRAPPER) or (
            receiver.kind is Kind.INSTANCE and isinstance(receiver.ref, ClassInfo)
        ):
            self.rebind(receiver_node, moved, env)
            env.update_aliases(receiver, moved)  # `policy = model; policy.to(device)`
        return moved

    def note_kept_device_defaults(
        self, node: cst.Call, info: FunctionInfo, args: Args, bound: bool, env: Env
    ) -> None:
        """``get_batch(keys)`` leaving ``device="cuda"`` where the caller holds a run-time
        ``device`` of its own: what the callee places lands on the hard-coded default."""
        for param in unpassed_device_parameters(info, args, bound, self.state.device_names):
            default = self.device_argument(param.default, self.expressions.eval(param.default, env))
            held = env.get(param.name.value)
            if (
                default is not None
                and is_hard_coded_accelerator(default)
                and held is not None
                and held.kind in (Kind.DEVICE, Kind.STRING)
                and _run_time_choice(held.device)
            ):
                self.state.record(DeviceDefaultKept(node, param, default, held))

    def synchronize_if_blocking(self, value: Value, env: Env) -> None:
        """A blocking copy off an accelerator waits for the stream: earlier copies are done."""
        if can_be_accelerator(value.device):
            self.synchronize(env)

    def move_target(self, name: str, args: Args) -> tuple[Device | None, cst.BaseExpression | None]:
        """Where a move sends its receiver (None: nowhere new, e.g. ``.to(torch.half)``).

        The second item is the expression naming the device, for messages.
        """
        if name == "cpu":
            return CPU, None
        given = args.get(0, "device")
        if name == "cuda":
            device = self.device_argument(*given) if given is not None else None
            subject = given[0] if given is not None and dotted_name(given[0]) else None
            if isinstance(device, Symbol):
                return replace(device, gpu=True), subject  # `.cuda(rank)`: cuda:<rank>
            if isinstance(device, Concrete) and device.type == "cuda":
                return device, subject
            return Concrete("cuda"), subject
        if given is None:
            given = args.keywords.get("other")
        if given is None:
            return None, None
        subject = None if isinstance(given[0], cst.SimpleString) else given[0]
        return self.device_argument(*given), subject

    def rebind(self, node: cst.BaseExpression, value: Value, env: Env) -> None:
        """Record an in-place move of the object named by ``node``."""
        path = dotted_name(node)
        if path is not None:
            env.update(path, value)

    def tensor_method(
        self,
        node: cst.Call,
        receiver_node: cst.BaseExpression,
        receiver: Value,
        name: str,
        args: Args,
        env: Env,
    ) -> Value:
        if name == "copy_":
            return receiver
        if (
            name == "requires_grad_"
            and receiver.ref is None
            and _is_false(args.get(0, "requires_grad"))
        ):
            return replace(receiver, ref=FROZEN)  # kept for a configuration that does not train it
        if name == "numpy":
            if not _is_true_keyword(args, "force"):  # numpy(force=True) copies to the host
                self.state.record(HostConversion(node, Operand(receiver_node, receiver)))
            return Value(Kind.UNKNOWN, ref=CALL_RESULT)
        if name in ("item", "tolist"):
            self.synchronize_if_blocking(receiver, env)
            return SCALAR_VALUE
        if name == "type":
            converted = torch_model.type_conversion(node, receiver, args)
            if converted is not None:
                return converted
        spec = torch_api.tensor_method(name)
        if spec is None:
            return Value(Kind.UNKNOWN, ref=CALL_RESULT)
        return self.apply_spec(spec, name, node, args, (receiver_node, receiver))

    def module_method(self, node: cst.Call, module: Value, name: str, args: Args) -> Value:
        if name == "forward":
            return self.module_call(node, module, args)
        return torch_model.module_method(module, name)

    # -- modules ----------------------------------------------------------------

    def module_call(self, node: cst.Call, module: Value, args: Args) -> Value:
        """A layer, model or loss called with inputs; its output lives where it computes."""
        inputs = torch_model.module_inputs(module, args, self._forward_inputs(module, args))
        self.state.record(
            ModuleCall(node, Operand(node.func, module), tuple(inputs), self.flow.function)
        )
        output = torch_model.module_output(module, inputs)
        if output.kind is Kind.UNKNOWN and self._part_of_this_module(node):
            return _computed_by_a_part(node, module, args) or output
        return output

    def _part_of_this_module(self, node: cst.Call) -> bool:
        """``self.<name>(...)`` in a method of a module class."""
        func = node.func
        if not isinstance(func, cst.Attribute):
            return False
        owner = self.state.values.get(func.value)
        return (
            owner is not None
            and owner.kind in (Kind.INSTANCE, Kind.MODULE)
            and _is_module_class(owner.ref)
        )

    def _forward_inputs(
        self, module: Value, args: Args
    ) -> list[tuple[cst.BaseExpression, Value]] | None:
        """What a visible module's ``forward`` takes as inputs of this call (None: unseen)."""
        forward = module.ref.methods.get("forward") if isinstance(module.ref, ClassInfo) else None
        if forward is None or args.starred or args.unpacked:
            return None
        return forward.inputs_given(args, self.functions.tensor_evidence(forward))


def _computed_by_a_part(node: cst.Call, callee: Value, args: Args) -> Value | None:
    """``self.encoder(x)`` in a module's method, with ``x`` an input of the module and
    ``encoder`` something the analysis cannot see (a model given to ``__init__``): a
    submodule moves with the module and a plain function computes where its input is, so
    the result is on the module's device either way (and comes from the input)."""
    if is_known(callee.device):
        return None
    for _, value in args.all():
        if value.kind is Kind.TENSOR and value.device == MODULE_DEVICE and value.origin:
            origin = Origin(
                "computed by {} from an input of the module", value.origin.node, node.func
            )
            return Value(Kind.TENSOR, MODULE_DEVICE, origin)
    return None


def _sets_up_distributed(name: str | None) -> bool:
    """``init_distributed_mode(args)``, ``setup_dist()``: a helper that sets up the process
    group (and usually this process's GPU with ``torch.cuda.set_device``)."""
    lowered = (name or "").lower()
    return "dist" in lowered and ("init" in lowered or "setup" in lowered)


def _run_time_choice(device: Device) -> bool:
    """A device variable that may be the cpu or any GPU; not this process's GPU (a rank)."""
    return (
        isinstance(device, Symbol)
        and device.accel
        and ":" not in device.name
        and not is_rank_name(device.name)
    )


def _outside_the_file(callee: Value) -> bool:
    """An imported callable, not torch's own (whose device effects the table knows)."""
    if callee.kind is Kind.NAMESPACE:
        return not str(callee.ref).startswith("torch.")
    return callee.kind is Kind.UNKNOWN


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _is_false(given: tuple[cst.BaseExpression, Value] | None) -> bool:
    return given is not None and isinstance(given[0], cst.Name) and given[0].value == "False"


def _is_true_keyword(args: Args, name: str) -> bool:
    given = args.keywords.get(name)
    return given is not None and _is_true(given[0])


def _first_origin(value: Value) -> Origin | None:
    """The origin of the first part of a value that has one (a dataset item's tensors)."""
    return next((part.origin for part in parts(value) if part.origin is not None), None)


def _literal_int(given: tuple[cst.BaseExpression, Value] | None, default: int) -> int | None:
    """An argument's value when it is a known int, ``default`` when it was not given."""
    if given is None:
        return default
    return given[1].ref if isinstance(given[1].ref, int) else None


def _is_module_class(ref: object) -> bool:
    return isinstance(ref, ClassInfo) and ref.kind is ClassKind.MODULE


def _is_forward(receiver: Value, method: FunctionInfo | None) -> bool:
    """``self.forward(x)`` on a module class: where the analysis goes no deeper (another
    file's code, past the call depth), it is still the module computing on ``x``."""
    return (
        method is not None
        and method.node.name.value == "forward"
        and isinstance(receiver.ref, ClassInfo)
        and receiver.ref.kind is ClassKind.MODULE
    )


def as_module(instance: Value) -> Value:
    """A module class's ``self`` as the module it is."""
    info = instance.ref
    return Value(Kind.MODULE, instance.device, instance.origin, stateful=info.stateful, ref=info)


def _as_placed_module(instance: Value) -> Value:
    """``self`` in a module class's method, as the module whose tensors ``self.parameters()``
    gives: where it was placed, or the module's device when nothing is known of it."""
    device = instance.device if is_known(instance.device) else MODULE_DEVICE
    return as_module(instance).with_device(device, instance.origin)


def _runs_on_the_instance(method: cst.FunctionDef, device: Device) -> bool:
    """A method of the module's own class that ``model.<name>(...)`` runs with ``self``: not
    ``__init__``, not a static or class method; ``forward`` called by name only on a model
    placed somewhere known (else it is the module call that ``model(x)`` is)."""
    if method.name.value == "__init__":
        return False
    if method.name.value == "forward" and not is_placed(device):
        return False
    return not decorated_with(method, "staticmethod", "classmethod")
