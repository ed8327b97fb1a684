"""DVL203: ``torch.load`` without ``map_location`` of device tensors where the device may change."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import libcst as cst

from devlint.rulekit.checkpoint_paths import file_names, path_argument
from devlint.core.events import CheckpointLoad, CheckpointSave, Facts
from devlint.core.lattice import CPU, is_known
from devlint.rulekit.loaded_values import LoadedValues, in_scope
from devlint.core.syntax import descendants, dotted_name, last_name, root_name, string_value
from devlint.core.values import Kind, Value
from devlint.diagnostic import RelatedPlace, Severity
from devlint.rulekit.fixes import ancestors, is_bound_at, with_keyword
from devlint.rulekit.message import Message, place
from devlint.rulekit.offloaded_state import OffloadedState
from devlint.rule import Finding, Fix, Rule, RuleMeta, RuntimeExpectation


class LoadWithoutMapLocation(Rule):
    """## What it does
    Finds `torch.load(...)` without `map_location` of a checkpoint the code
    shows to hold model weights or tensors (it goes into `load_state_dict`, its
    `"model"`/`"state_dict"`/`"optimizer"` entries are read, its tensors are
    moved with `.to()`) that the same file writes with `torch.save` as they
    are (not moved to the CPU), in a file that chooses its device at run time
    (`torch.cuda.is_available()`, a "cuda if available" device, a `device`
    argument or `args.device`) or whose writer saves a module's
    `state_dict()` (the module is wherever its user placed it). Where nothing in
    the file writes, another file of the project that saves a module's
    `state_dict()` as it is (a training script's checkpoints, read back by a
    demo) counts as the writer, in a file that chooses its device at run time.
    Also a load in a function that takes a `map_location` parameter and does
    not pass it on.

    It stays silent where the code gives no reason to believe the file holds
    device tensors: weights nothing in the project writes (a path the user gives,
    a released download: whether they hold CUDA tensors is unknown), vocabularies,
    statistics and Python values; for
    `torch.load(*args, **kwargs)` wrappers whose callers may pass
    `map_location`, for a load that runs only `if torch.cuda.is_available()` or
    whose `if`'s other branch passes `map_location`, for a file the same
    function saved a moment before (or a checkpoint it rewrites in place) or a
    `@pytest.fixture` the loading test asks for wrote, and for a file the same code saves as `tensor.cpu()` (or as a dict it fills
    with `param.cpu()` copies), or as a state dict FSDP gathers on the CPU (under a config
    with `offload_to_cpu=True`, or from `full_optim_state_dict`).

    ## Why is this bad?
    `torch.load` restores every storage to the device it was saved from. A
    checkpoint written on a GPU then fails on a machine without one
    (`RuntimeError: Attempting to deserialize object on a CUDA device but
    torch.cuda.is_available() is False`), and on a multi-GPU machine every
    process loads it onto the GPU that saved it.

    `load_state_dict` copies into the model's existing parameters wherever they
    are, so once the checkpoint is loaded with a `map_location` the model's own
    placement wins; there is nothing more to report there.

    ## Fix safety
    The fix passes `map_location=` the device variable the code uses where it
    loads (`device`, `args.device`), or `"cpu"` when there is none in scope. It
    is safe when the checkpoint goes straight into `load_state_dict`
    (`model.load_state_dict(torch.load(path)["model"])`), which copies into the
    parameters wherever they are; otherwise it is unsafe, since the loaded
    tensors then live on another device than before.

    ## References
    - [torch.load](https://pytorch.org/docs/stable/generated/torch.load.html)
    - [Saving and loading models across devices](https://pytorch.org/tutorials/beginner/saving_loading_models.html#saving-loading-model-across-devices)
    """

    meta = RuleMeta(
        code="DVL203",
        name="load-without-map-location",
        summary="torch.load without map_location in code that picks its device at run time",
        severity=Severity.WARNING,
        fixable=True,
        runtime=RuntimeExpectation(
            exception="RuntimeError", message="Attempting to deserialize object on a CUDA device"
        ),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        file = _File(facts)
        for load in file.loads:
            if load.map_location or _passes_unpacked_arguments(load.node):
                continue
            reason = _reason_to_report(file, load.node)
            if reason is None:
                continue
            evidence, parameter = reason
            advice = f"`map_location={parameter}`" if parameter else _DEFAULT_ADVICE
            message = (
                "`torch.load` without `map_location` restores tensors to the device they "
                "were saved from; " + evidence + f", so pass {advice}"
            )
            fix = partial(_fix, facts, load, parameter)
            yield Finding(load.node, message, self.meta.severity, fix)


class _File:
    """One file's loads and saves (once per call: loops are analysed more than once), their
    scopes, and what flows from each load, each worked out once."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self.loads = list({load.node: load for load in facts.of(CheckpointLoad)}.values())
        self.saves = list({save.node: save for save in facts.of(CheckpointSave)}.values())
        self._scopes = {
            event.node: event.scope or facts.module for event in (*self.loads, *self.saves)
        }
        self._nodes: dict[cst.CSTNode, list[cst.CSTNode]] = {}
        self._loaded: dict[cst.Call, LoadedValues] = {}

    def scope(self, node: cst.CSTNode) -> cst.CSTNode:
        """The function ``node`` runs in, or the module (as the analysis recorded it for loads
        and saves: no parent map is built for files that need nothing else)."""
        known = self._scopes.get(node)
        return known if known is not None else _scope(self.facts, node) or self.facts.module

    def nodes(self, scope: cst.CSTNode) -> list[cst.CSTNode]:
        if scope not in self._nodes:
            self._nodes[scope] = list(in_scope(scope))
        return self._nodes[scope]

    def loaded(self, load: cst.Call) -> LoadedValues:
        if load not in self._loaded:
            self._loaded[load] = LoadedValues(load, self.nodes(self.scope(load)))
        return self._loaded[load]


_DEFAULT_ADVICE = '`map_location=device` (or `"cpu"`)'

# What a checkpoint read this way holds: model weights or a training state, on the device
# that saved them (keys of `torch.save({...})` checkpoints and of BasicSR-style weight files).
_CHECKPOINT_KEYS = frozenset(
    {
        "model",
        "model_state_dict",
        "state_dict",
        "optimizer",
        "optimizer_state_dict",
        "optim",
        "net",
        "params",
        "params_ema",
        "ema",
        "weights",
    }
)
_PARAMETER_SUFFIXES = (".weight", ".bias")  # a state-dict key: "encoder.embed_tokens.weight"
_MOVES = frozenset({"to", "cuda"})


def _reason_to_report(file: _File, load: cst.Call) -> tuple[Message, str | None] | None:
    """Why this load will restore device tensors where that device may be absent, with the
    parameter that says where to load when the function takes one; None when the code gives
    no reason to believe so (data, statistics, a file the same code wrote, a guarded load).

    The reason is looked for first: most loads have none, and the vetoes after it read
    positions and the parent map, which cost a file-wide pass each.
    """
    scope = file.scope(load)
    ignored = _ignored_location_parameter(scope)
    if ignored is not None and isinstance(scope, cst.FunctionDef):
        line = place(file.facts, ignored)
        reason = f"`{scope.name.value}` takes `map_location` (" + line + ") but ignores it"
        found: tuple[Message, str | None] | None = (reason, "map_location")
    else:
        found = _written_on_device(file, scope, load) or _written_elsewhere(file, scope, load)
    if found is None or _written_on_cpu(file, load) or _reads_back_own_file(file, scope, load):
        return None
    return None if _guarded(file, load) else found


def _written_on_device(
    file: _File, scope: cst.CSTNode, load: cst.Call
) -> tuple[Message, None] | None:
    """This file writes what ``load`` reads without moving it to the CPU, and it holds weights
    or a training state the program may read where their device is absent."""
    facts = file.facts
    writer = _device_writer(file, load)
    if writer is None:
        return None
    if not facts.runtime_device and not _saves_module_state(file, writer):
        return None
    contents = _contents(file, scope, load)
    if contents is None:
        return None
    saved = "this file writes it at " + place(facts, writer) + " without moving it to the CPU"
    if facts.runtime_device:
        return contents + ", " + saved + ", and this file picks its device at run time", None
    return contents + ", " + saved + " (a module's state, on whichever device the module is)", None


def _written_elsewhere(
    file: _File, scope: cst.CSTNode, load: cst.Call
) -> tuple[Message, None] | None:
    """No code of this file writes what ``load`` reads, but another file of the project saves
    a module's state as it is (a training script's checkpoints, read back by a demo or an
    evaluation script that picks its device at run time): the tensors are on whichever
    device the module was on there. Only with no writer here at all: a file this file
    writes is its own."""
    facts = file.facts
    if facts.importer is None or not facts.runtime_device or file.saves:
        return None
    contents = _contents(file, scope, load)
    if contents is None:
        return None
    names = file_names(path_argument(load, 0))
    for other in facts.importer.checkpoint_writers() or ():
        written = _File(other.facts)
        for save in written.saves:
            if names and not names & file_names(path_argument(save.node, 1)):
                continue  # it names another file, or a name this load does not
            if _keeps_no_device_tensors(written, save.node):
                continue
            if not _saves_module_state(written, save.node):
                continue
            line = other.facts.line_of(save.node)
            where = Message(f"{other.name}:{line}", (RelatedPlace(other.path, line),))
            saved = "the project writes it at " + where + " without moving it to the CPU"
            return contents + ", " + saved + ", and this file picks its device at run time", None
    return None


def _passes_unpacked_arguments(load: cst.Call) -> bool:
    """``torch.load(*args, **kwargs)``: a wrapper whose callers may pass ``map_location``."""
    return any(arg.star for arg in load.args)


def _contents(file: _File, scope: cst.CSTNode, load: cst.Call) -> Message | None:
    """What the code shows the loaded object holds, at the first place that shows it."""
    loaded = file.loaded(load)
    found: list[tuple[int, Message]] = []
    for node in file.nodes(scope):
        shown = _shows_contents(file.facts, loaded, node)
        if shown is not None:
            found.append((file.facts.line_of(node), shown))
    return min(found, key=lambda pair: (pair[0], pair[1].text))[1] if found else None


def _shows_contents(facts: Facts, loaded: LoadedValues, node: cst.CSTNode) -> Message | None:
    """What ``node`` shows the loaded object holds. Lines are read only for a match: the first
    line read makes the file's positions, a pass over the whole tree."""
    if isinstance(node, cst.Call):
        callee = last_name(node.func) or ""
        if "state_dict" in callee and any(loaded.holds(arg.value) for arg in node.args):
            code = facts.code_of(node.func)
            return f"it holds model weights (restored by `{code}` at " + place(facts, node) + ")"
        if (
            isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _MOVES
            and loaded.holds(node.func.value)
        ):
            moved = node.func.attr.value
            return f"it holds tensors (moved by `.{moved}()` at " + place(facts, node) + ")"
        if (
            callee == "get"
            and node.args
            and _is_checkpoint_key(node.args[0].value)
            and isinstance(node.func, cst.Attribute)
            and loaded.holds(node.func.value)
        ):
            return f"it holds a checkpoint (`{facts.code_of(node)}` at " + place(facts, node) + ")"
    if isinstance(node, cst.Subscript) and loaded.holds(node.value) and len(node.slice) == 1:
        index = node.slice[0].slice
        if isinstance(index, cst.Index) and _is_checkpoint_key(index.value):
            return f"it holds a checkpoint (`{facts.code_of(node)}` at " + place(facts, node) + ")"
    return None


def _is_checkpoint_key(node: cst.BaseExpression) -> bool:
    key = string_value(node)
    return key is not None and (key in _CHECKPOINT_KEYS or key.endswith(_PARAMETER_SUFFIXES))


def _ignored_location_parameter(scope: cst.CSTNode) -> cst.Param | None:
    """A ``map_location`` parameter: the caller says where the checkpoint should go, and this
    load does not listen. (An unused ``device`` parameter says less: checkpoint hooks take one
    whatever they load.)"""
    if not isinstance(scope, cst.FunctionDef):
        return None
    params = scope.params
    every = (*params.posonly_params, *params.params, *params.kwonly_params)
    return next((param for param in every if param.name.value == "map_location"), None)


def _guarded(file: _File, load: cst.Call) -> bool:
    """The load runs only where CUDA is available, or its ``if``'s other branch maps, or the
    ``except`` of its ``try`` loads again with ``map_location``: the code chose where each
    branch loads (on a machine without the saving device, ``torch.load`` raises a
    RuntimeError, "Attempting to deserialize object on a CUDA device", which that handler
    takes)."""
    child: cst.CSTNode = load
    for parent in ancestors(file.facts, load):
        if isinstance(parent, cst.FunctionDef | cst.Module):
            return False
        if isinstance(parent, cst.Try) and child is parent.body:
            if any(_catches_runtime_errors(h) and _maps_inside(file, h) for h in parent.handlers):
                return True
        if isinstance(parent, cst.If) and (child is parent.body or child is parent.orelse):
            in_body = child is parent.body
            if _cuda_available_test(parent.test) is in_body:
                return True
            other = parent.orelse if in_body else parent.body
            if other is not None and _maps_inside(file, other):
                return True
        child = parent
    return False


def _catches_runtime_errors(handler: cst.ExceptHandler) -> bool:
    """A bare ``except:``, or one naming ``RuntimeError`` or a base of it."""
    if handler.type is None:
        return True
    caught = handler.type.elements if isinstance(handler.type, cst.Tuple) else ()
    types = [element.value for element in caught] or [handler.type]
    names = {(dotted_name(t) or "").rsplit(".", 1)[-1] for t in types}
    return bool(names & {"RuntimeError", "Exception", "BaseException"})


def _cuda_available_test(test: cst.BaseExpression) -> bool | None:
    """True for ``torch.cuda.is_available()``, False for its negation, None otherwise."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _cuda_available_test(test.expression)
        return None if inner is None else not inner
    if isinstance(test, cst.Call) and (dotted_name(test.func) or "").endswith("cuda.is_available"):
        return True
    return None


def _maps_inside(file: _File, branch: cst.CSTNode) -> bool:
    return any(
        load.map_location and any(node is branch for node in ancestors(file.facts, load.node))
        for load in file.loads
    )


def _reads_back_own_file(file: _File, scope: cst.CSTNode, load: cst.Call) -> bool:
    """The same function saved this path before loading it (a round trip on one machine), or
    saves a checkpoint it loaded (a tool that rewrites checkpoint files, keeping devices)."""
    facts = file.facts
    path = _path_text(facts, load, 0)
    saves = [save.node for save in file.saves if file.scope(save.node) is scope]
    loads = [other.node for other in file.loads if file.scope(other.node) is scope]
    for save in saves:
        if (
            path is not None
            and _path_text(facts, save, 1) == path
            and facts.span_of(save)[0] < facts.span_of(load)[0]
        ):
            return True
        payload = save.args[0].value if save.args else None
        if payload is not None and any(file.loaded(other).holds(payload) for other in loads):
            return True
    return False


def _path_text(facts: Facts, call: cst.Call, position: int) -> str | None:
    node = path_argument(call, position)
    return None if node is None else "".join(facts.module.code_for_node(node).split())


def _written_on_cpu(file: _File, load: cst.Call) -> bool:
    """The file saves ``x.cpu()`` under the file name this load reads (``"feats.pth"``)."""
    names = file_names(path_argument(load, 0))
    if not names:
        return False
    for save in file.saves:
        payload = save.node.args[0].value if save.node.args else None
        moved_to_cpu = (
            isinstance(payload, cst.Call)
            and isinstance(payload.func, cst.Attribute)
            and payload.func.attr.value == "cpu"
        )
        if moved_to_cpu and names & file_names(path_argument(save.node, 1)):
            return True
    return False


def _device_writer(file: _File, load: cst.Call) -> cst.Call | None:
    """The ``torch.save`` of this file that may write what ``load`` reads, as its tensors are:
    not moved to the CPU and not a checkpoint it loaded itself. Without one the file comes from
    elsewhere (a released download, another file's writer that may save ``.cpu()`` copies), and
    what the analysis cannot see is unknown: no reason to believe it holds device tensors."""
    names = file_names(path_argument(load, 0))
    for save in file.saves:
        written = file_names(path_argument(save.node, 1))
        if names and written and not names & written:
            continue  # it names another file
        if _keeps_no_device_tensors(file, save.node):
            continue
        if _fixture_of(file, save.node, load):
            continue
        return save.node
    return None


def _keeps_no_device_tensors(file: _File, save: cst.Call) -> bool:
    """The writer saves CPU copies, or rewrites a checkpoint it loaded (which says nothing
    of the devices it holds)."""
    return _saves_cpu_copies(file, save) or _saves_a_load(file, save)


def _fixture_of(file: _File, save: cst.Call, load: cst.Call) -> bool:
    """The writer is a ``@pytest.fixture`` the loading test asks for by name: the same test
    run writes the file and reads it back, on one machine."""
    writer = file.scope(save)
    reader = file.scope(load)
    if not isinstance(writer, cst.FunctionDef) or not isinstance(reader, cst.FunctionDef):
        return False
    fixture = any(
        (
            dotted_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
            or ""
        ).split(".")[-1]
        == "fixture"
        for d in writer.decorators
    )
    params = reader.params
    asked = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    return fixture and writer.name.value in asked


def _saves_cpu_copies(file: _File, save: cst.Call) -> bool:
    """The payload is a CPU copy, or a name the writer's scope fills with CPU copies
    (``state_dict[key] = param.cpu()`` then ``save_dict["params"] = state_dict``), or a state
    dict FSDP gathered on the CPU (``rulekit.offloaded_state``)."""
    payload = save.args[0].value if save.args else None
    if payload is None:
        return False
    nodes = file.nodes(file.scope(save))
    offloaded = OffloadedState(file.facts.module, nodes)
    if _is_cpu_copy(payload) or offloaded.holds(payload, save):
        return True
    if not isinstance(payload, cst.Name):
        return False
    assignments = [node for node in nodes if isinstance(node, cst.Assign)]
    on_cpu: set[str] = set()
    for _ in range(3):  # a copy put into a dict, that dict into another
        known = len(on_cpu)
        for node in assignments:
            value = node.value
            if (
                _is_cpu_copy(value)
                or offloaded.holds(value, node)
                or (isinstance(value, cst.Name) and value.value in on_cpu)
            ):
                on_cpu.update(
                    root_name(target.target)
                    for target in node.targets
                    if isinstance(target.target, cst.Name | cst.Subscript)
                )
        if len(on_cpu) == known:
            break
    return payload.value in on_cpu


def _saves_module_state(file: _File, save: cst.Call) -> bool:
    """The writer saves a ``state_dict()`` as it is (``torch.save(self.state_dict(), f)``,
    ``{"model": model.state_dict()}``): the tensors of a module, on the device its user placed
    it on, which device-agnostic code does not choose."""
    payload = save.args[0].value if save.args else None
    if payload is None:
        return False
    if _calls_state_dict(payload):
        return not _states_of_cpu_modules(file, payload)
    if not isinstance(payload, cst.Name):
        return False
    return any(
        isinstance(node, cst.Assign)
        and any(
            isinstance(target.target, cst.Name) and target.target.value == payload.value
            for target in node.targets
        )
        and _calls_state_dict(node.value)
        and not _states_of_cpu_modules(file, node.value)
        for node in file.nodes(file.scope(save))
    )


def _states_of_cpu_modules(file: _File, node: cst.BaseExpression) -> bool:
    """Every ``m.state_dict()`` in ``node`` is of a module the analysis knows is on the CPU
    (built here and never placed): its state is CPU tensors, wherever it is loaded."""
    receivers = [
        part.func.value
        for part in (node, *descendants(node))
        if isinstance(part, cst.Call)
        and isinstance(part.func, cst.Attribute)
        and part.func.attr.value == "state_dict"
    ]
    return bool(receivers) and all(file.facts.device_of(r) == CPU for r in receivers)


def _calls_state_dict(node: cst.BaseExpression) -> bool:
    return any(
        isinstance(part, cst.Call) and last_name(part.func) == "state_dict"
        for part in (node, *descendants(node))
    )


def _is_cpu_copy(node: cst.BaseExpression) -> bool:
    """``x.cpu()``, ``x.detach().to("cpu")``, ``model.cpu().state_dict()``, or a dict or
    comprehension of such copies."""
    if isinstance(node, cst.DictComp):
        return _is_cpu_copy(node.value)
    if isinstance(node, cst.ListComp | cst.SetComp | cst.GeneratorExp):
        return _is_cpu_copy(node.elt)
    if isinstance(node, cst.Dict):
        values = [
            element.value for element in node.elements if isinstance(element, cst.DictElement)
        ]
        return bool(values) and len(values) == len(node.elements) and all(map(_is_cpu_copy, values))
    while isinstance(node, cst.Call | cst.Attribute | cst.Subscript):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            if method == "cpu" or (
                method == "to" and any(string_value(arg.value) == "cpu" for arg in node.args)
            ):
                return True
        node = node.func if isinstance(node, cst.Call) else node.value
    return False


def _saves_a_load(file: _File, save: cst.Call) -> bool:
    """The writer saves a checkpoint it loaded (a tool that rewrites checkpoint files): it
    keeps whatever devices the file had, which says nothing about them."""
    payload = save.args[0].value if save.args else None
    scope = file.scope(save)
    return payload is not None and any(
        file.scope(other.node) is scope and file.loaded(other.node).holds(payload)
        for other in file.loads
    )


_NOT_CONFIG = frozenset({Kind.TENSOR, Kind.MODULE, Kind.WRAPPER, Kind.BATCH})


def _fix(facts: Facts, load: CheckpointLoad, parameter: str | None) -> Fix | None:
    device = parameter or _device_variable(facts, load.node)
    location = device or '"cpu"'
    call = with_keyword(load.node, "map_location", location)
    if call is None:
        return None
    title = f"Pass `map_location={location}`"
    return Fix(
        load.node, facts.module.code_for_node(call), title, _feeds_load_state_dict(facts, load)
    )


def _device_variable(facts: Facts, at: cst.Call) -> str | None:
    """A device variable the analysis saw that holds a value where ``at`` runs: a name bound
    there, or an attribute (``args.device``) read earlier in the same scope."""
    scope = _scope(facts, at)
    start = facts.span_of(at)[0]
    found: list[tuple[bool, tuple[int, int], str]] = []
    names_seen: set[str] = set()  # a name is bound at `at` or not: ask once per name
    for node, value in facts.values.items():
        if not _holds_device(value) or not isinstance(node, cst.Name | cst.Attribute):
            continue
        text = dotted_name(node)
        if text is None or text in names_seen:
            continue
        if isinstance(node, cst.Name):
            names_seen.add(text)
        if not is_bound_at(facts, text.split(".", 1)[0], at):
            continue
        where = facts.span_of(node)[0]
        if isinstance(node, cst.Attribute):
            receiver = facts.value_of(node.value)
            if receiver is not None and receiver.kind in _NOT_CONFIG:
                continue  # `x.device` of a tensor or a model
            if where >= start or _scope(facts, node) is not scope:
                continue
        found.append((isinstance(node, cst.Attribute), where, text))
    return min(found)[2] if found else None


def _holds_device(value: Value) -> bool:
    """A device object, or a string naming a device (``"cuda" if … else "cpu"``)."""
    return value.kind is Kind.DEVICE or (value.kind is Kind.STRING and is_known(value.device))


def _scope(facts: Facts, node: cst.CSTNode) -> cst.CSTNode | None:
    return next((n for n in ancestors(facts, node) if isinstance(n, cst.FunctionDef)), None)


def _feeds_load_state_dict(facts: Facts, load: CheckpointLoad) -> bool:
    """``model.load_state_dict(torch.load(path))`` (or of an item of the checkpoint)."""
    node: cst.CSTNode = load.node
    for parent in ancestors(facts, node):
        if isinstance(parent, cst.Subscript) and parent.value is node:
            node = parent
            continue
        if isinstance(parent, cst.Arg) and parent.value is node and parent.keyword is None:
            node = parent
            continue
        return (
            isinstance(parent, cst.Call)
            and isinstance(parent.func, cst.Attribute)
            and parent.func.attr.value == "load_state_dict"
            and bool(parent.args)
            and parent.args[0] is node
        )
    return False
