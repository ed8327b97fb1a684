"""Whether a run with unknown arguments rests on a caller: the premise of assumed devices.

A function run with nothing known of its caller takes its receiver for a module someone
placed on a GPU (``the module's device``) and its tensor parameters for tensors on a
caller's device. For code someone calls with models and tensors on a GPU, that is the
point: the bug shows before any caller exists. But a method nothing calls and that
needs no argument — a model's ``test()`` self-check that forwards a CPU sample it makes
through the fresh model — has no such caller, and unless its own code reads or chooses a
device, nothing shows that it ever meets one. (One that takes the user's data, such as a
model's ``predict(image_path)``, is an entry point of a library: its users call it.)

Nor does a tensor parameter rest on an unknown caller when the project's callers are in
view: a helper that every call in the project gives CPU tensors or Python numbers (poses
read from disk, boxes already moved to the CPU) is CPU code as the project uses it. Calls in
the same file that give known values are runs of their own (``FunctionInfo.passed``); it
takes calls in other files to say more, and one call in the file giving anything else
(a value it cannot see) leaves the parameter a caller's.
"""

from __future__ import annotations

import libcst as cst

from devlint.core import torch_facts
from devlint.core.events import ArgumentsGiven, Clash, Facts, ModuleCall, OperandsMeet
from devlint.core.lattice import CPU, Symbol
from devlint.core.positions import NotInModule
from devlint.core.scopes import FunctionInfo
from devlint.core.syntax import decorated_with, device_handling, dotted_name
from devlint.core.values import Kind, Value, parts

_PLAIN_DECORATORS = (
    frozenset({"staticmethod", "classmethod", "abstractmethod", "abc.abstractmethod"})
    | torch_facts.GRAD_MODE_DECORATORS
)
"""Decorators that do not hand the function to a framework that calls it."""
_CACHE_KEY = "runs nobody calls"  # facts.cache: FunctionInfo -> its device handling, or None


def rests_on_no_caller(event: OperandsMeet | ModuleCall, facts: Facts) -> bool:
    """Whether ``event`` happened in the run of a function with unknown arguments that no
    code of the project calls, before that function's own code read or chose a device
    (a self-test that forwards a CPU sample and then moves the model is CPU code there)."""
    root, site = event.root, event.root_site
    if root is None or site is None:
        return False
    known = facts.cache.setdefault(_CACHE_KEY, {})
    if root not in known:
        known[root] = device_handling(root.node) if _uncalled(root, facts) else None
    handling = known[root]
    if handling is None:
        return False
    try:
        at = facts.span_of(site)[0]
        return all(facts.span_of(node)[0] >= at for node in handling)
    except NotInModule:
        return False


_HOST_KINDS = frozenset({Kind.SCALAR, Kind.STRING, Kind.NONE, Kind.DTYPE})
_CONTAINER_KINDS = frozenset({Kind.SEQUENCE, Kind.MAPPING})


def given_host_data_only(clash: Clash, event: OperandsMeet | ModuleCall, facts: Facts) -> bool:
    """Whether the parameter whose device ``clash`` assumes is given only host data (CPU
    tensors, Python numbers) by every call of the project, some of them in other files."""
    device, root = clash.second.value.device, event.root
    if not isinstance(device, Symbol) or not device.tensor or root is None or root.home is not None:
        return False
    name = device.holder
    if facts.importer is None or name not in _parameter_names(root):
        return False
    try:
        line = facts.line_of(root.node)
    except NotInModule:
        return False
    elsewhere = facts.importer.calls_into(root.name, line)
    if not elsewhere:
        return False
    here = [call.given for call in facts.of(ArgumentsGiven) if call.callee is root]
    return all(_host_data(dict(given).get(name)) for given in (*here, *elsewhere))


def _host_data(value: Value | None) -> bool:
    """A value that holds no tensor off the CPU: CPU tensors, numbers, strings, None."""
    if value is None:
        return False  # not passed: the default, or what ``**kwargs`` held
    found = list(parts(value))
    return any(part.kind not in _CONTAINER_KINDS for part in found) and all(
        part.kind in _HOST_KINDS
        or part.kind in _CONTAINER_KINDS
        or (part.kind is Kind.TENSOR and part.device == CPU)
        for part in found
    )


def _parameter_names(info: FunctionInfo) -> set[str]:
    params = info.node.params
    return {
        param.name.value
        for param in (*params.posonly_params, *params.params, *params.kwonly_params)
    }


def _uncalled(info: FunctionInfo, facts: Facts) -> bool:
    """``info`` runs on its own and nothing of the project calls it: it needs no argument
    (a self-check that makes its own sample, not an entry point that takes the user's data),
    and neither torch, pytest, a framework base, a decorator's registry nor any code of the
    project names it."""
    if _needs_arguments(info):
        return False
    name = info.name
    if name in torch_facts.CALLED_BY_TORCH or (name.startswith("__") and name.endswith("__")):
        return False
    if facts.test_module and name.startswith("test"):
        return False  # pytest calls it
    if any(not _plain(decorator.decorator) for decorator in info.node.decorators):
        return False
    if info.owner is not None and info.owner.framework_base:
        return False
    if facts.importer is None:
        return False
    return facts.importer.mentions(name) is False


def _needs_arguments(info: FunctionInfo) -> bool:
    """Whether a call must pass something (``self`` and ``cls`` aside)."""
    params = info.node.params
    positional = [*params.posonly_params, *params.params]
    if info.owner is not None and not decorated_with(info.node, "staticmethod"):
        positional = positional[1:]
    return any(param.default is None for param in (*positional, *params.kwonly_params))


def _plain(decorator: cst.BaseExpression) -> bool:
    called = decorator.func if isinstance(decorator, cst.Call) else decorator
    return dotted_name(called) in _PLAIN_DECORATORS
