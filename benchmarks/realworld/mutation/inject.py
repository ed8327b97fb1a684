"""Device-bug injection: every site of a known kind in a correct file, one mutant per site.

Each kind undoes one thing correct PyTorch code does to keep devices consistent (see
README.md, "Kinds"). :func:`mutants` parses the file with LibCST, finds the sites of every
kind in source order and returns, per site, the whole file with that one site mutated and
the lines the mutated code occupies in the mutant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

FACTORIES = frozenset(
    [
        "zeros",
        "ones",
        "empty",
        "full",
        "arange",
        "range",
        "linspace",
        "logspace",
        "eye",
        "rand",
        "randn",
        "randint",
        "randperm",
        "tensor",
        "as_tensor",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
        "rand_like",
        "randn_like",
        "randint_like",
        "tril_indices",
        "triu_indices",
        "empty_strided",
    ]
)
DTYPES = frozenset(
    [
        "float",
        "float32",
        "float64",
        "double",
        "half",
        "float16",
        "bfloat16",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "long",
        "uint8",
        "bool",
        "short",
        "complex64",
        "complex128",
    ]
)
MODULE_API = frozenset(
    [
        "state_dict",
        "load_state_dict",
        "parameters",
        "named_parameters",
        "buffers",
        "named_buffers",
        "children",
        "named_children",
        "modules",
        "named_modules",
        "train",
        "eval",
        "to",
        "cuda",
        "cpu",
        "zero_grad",
        "apply",
        "requires_grad_",
        "half",
        "float",
        "double",
        "forward",
        "register_buffer",
    ]
)
CONFIGS = frozenset(["args", "opt", "opts", "config", "cfg", "hparams", "self"])
"""Objects whose ``.device`` attribute is a chosen device, not another tensor's."""
KINDS = (
    "batch-transfer-dropped",
    "model-transfer-dropped",
    "tensor-transfer-dropped",
    "input-device-transfer-dropped",
    "transfer-result-discarded",
    "factory-device-dropped",
    "buffer-to-attribute",
    "parameter-to-attribute",
    "module-list-to-list",
    "cpu-before-numpy-dropped",
    "map-location-dropped",
    "wrapper-attribute",
)


@dataclass(frozen=True)
class Mutant:
    kind: str
    site: int
    """The site's index among the file's sites of this kind, in source order."""
    lines: tuple[int, int]
    """First and last line of the mutated code, in the mutant."""
    before: str
    after: str
    source: str


Rewrite = Callable[[cst.CSTNode], cst.CSTNode]


def mutants(source: str) -> list[Mutant]:
    """One mutant per site of every kind, in kind order then source order."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    finder = _SiteFinder()
    wrapper.visit(finder)
    positions = wrapper.resolve(PositionProvider)
    found = []
    counts: dict[str, int] = {}
    module = wrapper.module
    for kind, node, rewrite in sorted(finder.sites, key=lambda s: KINDS.index(s[0])):
        replacement = rewrite(node)
        mutated = module.visit(_Replace(node, replacement)).code
        if mutated == source:
            continue
        before, after = module.code_for_node(node), module.code_for_node(replacement)
        start = positions[node].start.line
        end = positions[node].end.line + after.count("\n") - before.count("\n")
        site = counts.get(kind, 0)
        counts[kind] = site + 1
        found.append(Mutant(kind, site, (start, max(start, end)), before, after, mutated))
    return found


class _Replace(cst.CSTTransformer):
    def __init__(self, target: cst.CSTNode, replacement: cst.CSTNode) -> None:
        self.target, self.replacement = target, replacement

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):  # type: ignore[override]
        return self.replacement if original is self.target else updated


# finding sites ------------------------------------------------------------------------------


class _SiteFinder(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (ParentNodeProvider,)

    def __init__(self) -> None:
        self.sites: list[tuple[str, cst.CSTNode, Rewrite]] = []
        self.loop_targets: list[set[str]] = [set()]
        self.modules: set[str] = set()
        """Names assigned ``Net(...)`` (or ``Net(...).to(...)``) somewhere in the file."""

    def _add(self, kind: str, node: cst.CSTNode, rewrite: Rewrite) -> None:
        self.sites.append((kind, node, rewrite))

    # loop and comprehension targets: the names a batch element is bound to
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.loop_targets.append(set())

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.loop_targets.pop()

    def visit_For(self, node: cst.For) -> None:
        self.loop_targets[-1] |= _names(node.target)

    def _comprehension_targets(self, node: cst.CSTNode) -> set[str]:
        """Names bound by the comprehensions around ``node`` (visited before their ``for``)."""
        names: set[str] = set()
        current = self.get_metadata(ParentNodeProvider, node, None)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Module)):
            for_in = getattr(current, "for_in", None)
            while isinstance(for_in, cst.CompFor):
                names |= _names(for_in.target)
                for_in = for_in.inner_for_in
            current = self.get_metadata(ParentNodeProvider, current, None)
        return names

    def visit_Call(self, node: cst.Call) -> None:
        method = _method(node)
        if method in ("to", "cuda"):
            self._transfer(node, method)
        elif method == "numpy":
            self._numpy(node)
        name = _callee(node)
        if name in FACTORIES and _is_torch(node) and _keyword(node, "device"):
            self._add("factory-device-dropped", node, lambda n: _without_keyword(n, "device"))
        if name == "load" and _is_torch(node) and _keyword(node, "map_location"):
            self._add("map-location-dropped", node, lambda n: _without_keyword(n, "map_location"))
        if name == "register_buffer" and method and node.args:
            self._buffer(node)
        if name in ("Parameter", "ModuleList", "ModuleDict") and self._assigned_to_self(node):
            self._container(node, name)
        if method and method == "type_as" and len(node.args) == 1:
            self._add("input-device-transfer-dropped", node, _receiver)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        inner = node.value
        if (
            isinstance(inner, cst.Attribute)
            and inner.attr.value == "module"
            and node.attr.value not in MODULE_API
        ):
            self._add("wrapper-attribute", node, lambda n: n.with_changes(value=n.value.value))

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if len(node.targets) != 1 or not isinstance(value, cst.Call):
            return
        if isinstance(node.targets[0].target, cst.Name) and _is_construction(value):
            self.modules.add(node.targets[0].target.value)
        if _method(value) not in ("to", "cuda"):
            return
        target = node.targets[0].target
        receiver = value.func.value  # type: ignore[attr-defined]
        if target.deep_equals(receiver):
            self._add("transfer-result-discarded", node, lambda n: cst.Expr(n.value))
        if isinstance(target, cst.Name) and _is_construction(value.func.value):
            self.modules.add(target.value)

    def _transfer(self, node: cst.Call, method: str) -> None:
        if method == "to" and not _moves_device(node):
            return
        receiver = node.func.value  # type: ignore[attr-defined]
        parent = self.get_metadata(ParentNodeProvider, node)
        if _device_of_other(node):
            kind = "input-device-transfer-dropped"
        elif _root_name(receiver) in self.loop_targets[-1] | self._comprehension_targets(node):
            kind = "batch-transfer-dropped"
        elif (
            isinstance(parent, cst.Expr)
            or _is_construction(receiver)
            or (isinstance(receiver, cst.Name) and receiver.value in self.modules)
        ):
            kind = "model-transfer-dropped"
        else:
            kind = "tensor-transfer-dropped"
        if isinstance(parent, cst.Expr):
            self._add(kind, parent, lambda n: cst.Pass())  # `model.to(device)` on its own
        else:
            self._add(kind, node, _without_device)

    def _numpy(self, node: cst.Call) -> None:
        """``.numpy()`` after ``.cpu()`` somewhere in its chain: drop that ``.cpu()``."""
        link = node.func.value  # type: ignore[attr-defined]
        while isinstance(link, (cst.Call, cst.Attribute)):
            if isinstance(link, cst.Attribute):
                link = link.value
                continue
            if not isinstance(link.func, cst.Attribute):
                return
            if link.func.attr.value == "cpu" and not link.args:
                self._add("cpu-before-numpy-dropped", link, _receiver)
                return
            link = link.func.value

    def _buffer(self, node: cst.Call) -> None:
        parent = self.get_metadata(ParentNodeProvider, node)
        if not isinstance(parent, cst.Expr):
            return
        owner = node.func.value  # type: ignore[attr-defined]

        def plain(statement: cst.CSTNode) -> cst.CSTNode:
            call = statement.value  # type: ignore[attr-defined]
            name, value = call.args[0].value, call.args[1].value
            if isinstance(name, cst.SimpleString) and name.evaluated_value.isidentifier():
                target = cst.Attribute(owner, cst.Name(name.evaluated_value))
                return cst.Assign([cst.AssignTarget(target)], value)
            args = [cst.Arg(owner), cst.Arg(name), cst.Arg(value)]
            return cst.Expr(cst.Call(cst.Name("setattr"), args))

        if len(node.args) >= 2 and node.args[0].keyword is None:
            self._add("buffer-to-attribute", parent, plain)

    def _assigned_to_self(self, node: cst.Call) -> bool:
        parent = self.get_metadata(ParentNodeProvider, node)
        if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
            return False
        target = parent.targets[0].target
        return isinstance(target, cst.Attribute) and _root_name(target) == "self"

    def _container(self, node: cst.Call, name: str) -> None:
        if name == "Parameter":
            if node.args and node.args[0].keyword is None:
                self._add("parameter-to-attribute", node, lambda n: n.args[0].value)
            return
        plain = "list" if name == "ModuleList" else "dict"
        self._add(
            "module-list-to-list",
            node,
            lambda n: n.with_changes(func=cst.Name(plain)),
        )


# helpers -------------------------------------------------------------------------------------


def _names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for element in target.elements for n in _names(element.value)}
    return set()


def _method(node: cst.Call) -> str | None:
    return node.func.attr.value if isinstance(node.func, cst.Attribute) else None


def _callee(node: cst.Call) -> str | None:
    if isinstance(node.func, cst.Attribute):
        return node.func.attr.value
    if isinstance(node.func, cst.Name):
        return node.func.value
    return None


def _is_torch(node: cst.Call) -> bool:
    """``torch.x(...)`` (or ``th.x``), or a bare name imported from torch."""
    func = node.func
    if isinstance(func, cst.Attribute):
        return isinstance(func.value, cst.Name) and func.value.value in ("torch", "th")
    return isinstance(func, cst.Name)


def _keyword(node: cst.Call, name: str) -> bool:
    return any(arg.keyword is not None and arg.keyword.value == name for arg in node.args)


def _without_keyword(node: cst.CSTNode, name: str) -> cst.CSTNode:
    assert isinstance(node, cst.Call)
    args = [a for a in node.args if not (a.keyword is not None and a.keyword.value == name)]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return node.with_changes(args=args)


def _is_dtype(expr: cst.BaseExpression) -> bool:
    """``torch.float16``, ``x.dtype`` or a name ``dtype``."""
    if isinstance(expr, cst.Attribute):
        return expr.attr.value in DTYPES or expr.attr.value == "dtype"
    return isinstance(expr, cst.Name) and expr.value == "dtype"


def _moves_device(node: cst.Call) -> bool:
    """``.to(...)`` with a device (or a tensor whose device it takes), not a dtype alone."""
    for arg in node.args:
        if arg.keyword is not None:
            if arg.keyword.value == "device":
                return True
        elif not _is_dtype(arg.value):
            return True
    return False


def _device_of_other(node: cst.Call) -> bool:
    """``.to(x.device)``, ``.to(device=x.device)`` or ``.to(x)``: follow another tensor."""
    for arg in node.args:
        value = arg.value
        if (
            isinstance(value, cst.Attribute)
            and value.attr.value == "device"
            and _root_name(value) not in CONFIGS
        ):
            return True
    first = node.args[0] if node.args else None
    return (
        _method(node) == "to"
        and first is not None
        and first.keyword is None
        and isinstance(first.value, cst.Name)
        and "device" not in first.value.value.lower()
        and first.value.value not in ("cuda", "dev", "gpu")
    )


def _without_device(node: cst.CSTNode) -> cst.CSTNode:
    """The transfer without its device: the receiver, or ``.to(dtype)`` when it kept a dtype."""
    assert isinstance(node, cst.Call)
    kept = [
        arg
        for arg in node.args
        if (arg.keyword is not None and arg.keyword.value not in ("device",))
        or (arg.keyword is None and _is_dtype(arg.value))
    ]
    kept = [a for a in kept if not (a.keyword and a.keyword.value == "non_blocking")]
    if _method(node) == "to" and any(
        (a.keyword and a.keyword.value == "dtype") or (a.keyword is None) for a in kept
    ):
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return node.with_changes(args=kept)
    return node.func.value  # type: ignore[attr-defined]


def _receiver(node: cst.CSTNode) -> cst.CSTNode:
    return node.func.value  # type: ignore[attr-defined]


def _root_name(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, (cst.Attribute, cst.Subscript, cst.Call)):
        expr = expr.value if not isinstance(expr, cst.Call) else expr.func
    return expr.value if isinstance(expr, cst.Name) else None


def _is_construction(expr: cst.BaseExpression) -> bool:
    """``Net(...)``: a class (CamelCase) being built; not a tensor (``torch.FloatTensor(...)``)."""
    if not isinstance(expr, cst.Call):
        return False
    name = _callee(expr)
    return bool(name) and name[0].isupper() and not name.endswith("Tensor")
