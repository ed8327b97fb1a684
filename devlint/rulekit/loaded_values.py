"""Which expressions of a scope hold what one call returned, or a part of it.

``ckpt = torch.load(path)`` then ``ckpt["model"]``, ``state = ckpt.get("ema")``,
``{k[7:]: v for k, v in state.items()}``: DVL203 asks where a checkpoint's
contents go (into ``load_state_dict``, moved with ``.to``) to learn what the
file holds. Plain syntax over one function (or the module body): a value
passed through any other call is not followed, so unknown stays unknown.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import libcst as cst

from devlint.core.syntax import descendants, dotted_name

_NESTED_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_PART_METHODS = frozenset({"get", "pop", "items", "values", "copy"})  # a part of a mapping
_BINDINGS = (cst.Assign, cst.AnnAssign, cst.For, cst.NamedExpr)
_ROUNDS = 3  # enough for a value rebound a few times (``sd = ...; sd = {..sd..}``)


def in_scope(scope: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node of a function's body (or the module's), not those of nested functions,
    lambdas or classes."""
    body = scope.body if isinstance(scope, cst.FunctionDef) else scope
    return descendants(body, lambda node: not isinstance(node, _NESTED_SCOPES))


class LoadedValues:
    """The expressions of a scope that hold ``source``'s result or a part of it; ``nodes`` are
    the scope's nodes (``in_scope``), listed once by the caller for all its loads."""

    def __init__(self, source: cst.Call, nodes: Iterable[cst.CSTNode]) -> None:
        self.source = source
        self.names: set[str] = set()
        bindings = [node for node in nodes if isinstance(node, _BINDINGS)]
        for _ in range(_ROUNDS):
            known = len(self.names)
            for node in bindings:
                self._bind(node)
            if len(self.names) == known:
                break

    def holds(self, node: cst.BaseExpression) -> bool:
        """Whether ``node`` evaluates to the result, or an item, entry or comprehension of it."""
        if node is self.source:
            return True
        if isinstance(node, cst.Name | cst.Attribute):
            name = dotted_name(node)
            if name is not None and name in self.names:
                return True
        if isinstance(node, cst.Subscript):
            return self.holds(node.value)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            return node.func.attr.value in _PART_METHODS and self.holds(node.func.value)
        if isinstance(node, cst.DictComp | cst.ListComp | cst.SetComp | cst.GeneratorExp):
            return self._over_held(node.for_in)
        return False

    def _over_held(self, loop: cst.CompFor) -> bool:
        return self.holds(loop.iter) or (
            loop.inner_for_in is not None and self._over_held(loop.inner_for_in)
        )

    def _bind(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self._bind_target(target.target, node.value)
        elif isinstance(node, cst.AnnAssign | cst.NamedExpr) and node.value is not None:
            self._bind_target(node.target, node.value)
        elif isinstance(node, cst.For) and self.holds(node.iter):
            self.names.update(_target_names(node.target))

    def _bind_target(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if (
            isinstance(target, cst.Tuple | cst.List)
            and isinstance(value, cst.Tuple | cst.List)
            and len(target.elements) == len(value.elements)
        ):  # a, b = x["a"], x["b"]
            for element, given in zip(target.elements, value.elements, strict=True):
                self._bind_target(element.value, given.value)
            return
        if self.holds(value):
            self.names.update(_target_names(target))


def _target_names(node: cst.BaseExpression) -> list[str]:
    """``a``, ``self.weights``, and the names of ``a, (b, *c)``."""
    if isinstance(node, cst.Tuple | cst.List):
        return [name for element in node.elements for name in _target_names(element.value)]
    if isinstance(node, cst.StarredElement):
        return _target_names(node.value)
    name = dotted_name(node)
    return [name] if name is not None else []
