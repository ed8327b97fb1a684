"""Branch tests that read a stable flag, so that two ``if`` statements on it can be correlated.

``if use_cuda: x = x.cuda()`` … ``if use_cuda: … else: …``: both tests read the
same flag, so the second ``else`` runs exactly where the first move did not.
A test is a flag when re-evaluating it gives the same answer as long as the
names it reads are not rebound: names, attributes, literals, comparisons,
``not``/``and``/``or`` and ``torch.cuda.is_available()`` (any other call may
answer differently each time: ``dist.get_rank() == 0`` is no flag).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from devlint.core import torch_facts
from devlint.core.syntax import dotted_name

_LITERALS = (cst.Integer, cst.Float, cst.SimpleString)
_NEGATED = {cst.IsNot: cst.Is, cst.NotEqual: cst.Equal}
_OPERATORS = {
    cst.Is: "is", cst.IsNot: "is not", cst.Equal: "==", cst.NotEqual: "!=", cst.In: "in",
    cst.NotIn: "not in", cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Flag:
    """A stable test: its ``key`` (the text of its positive form, spaced one way), whether the
    ``if`` body runs when the key holds (``positive``) and the dotted names whose rebinding
    changes it."""

    key: str
    positive: bool
    names: tuple[str, ...]


def flag_of(test: cst.BaseExpression) -> Flag | None:
    """The flag an ``if`` test reads, or None when the test may change between evaluations."""
    positive = True
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, positive = test.expression, not positive
    negated = (  # key on `is` / `==`: `is not` is its negation
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and type(test.comparisons[0].operator) in _NEGATED
    )
    positive = positive != negated
    names: list[str] = []
    key = _key(test, names, negate=negated)
    if key is None:
        return None
    return Flag(key, positive, tuple(sorted(set(names))))


def _key(node: cst.CSTNode, names: list[str], negate: bool = False) -> str | None:
    """The text of a test that reads only names and literals, spaced and bracketed one way
    (``negate``: with the operator of its one comparison negated), or None for any other
    test; collects the names it reads and their prefixes."""
    if isinstance(node, cst.Name | cst.Attribute):
        path = dotted_name(node)
        if path is None:
            return None
        parts = path.split(".")
        names.extend(".".join(parts[: i + 1]) for i in range(len(parts)))
        return path
    if isinstance(node, _LITERALS):
        return node.value
    if isinstance(node, cst.Call):
        name = dotted_name(node.func)
        stable = name in torch_facts.STABLE_AVAILABILITY_CHECKS and not node.args
        return f"{name}()" if stable else None
    if isinstance(node, cst.Comparison):
        text = _key(node.left, names)
        for target in node.comparisons:
            operator = type(target.operator)
            operator = _NEGATED[operator] if negate else operator
            comparator = _key(target.comparator, names)
            if text is None or comparator is None:
                return None
            text = f"{text} {_OPERATORS[operator]} {comparator}"
        return text
    if isinstance(node, cst.BooleanOperation):
        left, right = _key(node.left, names), _key(node.right, names)
        if left is None or right is None:
            return None
        return f"({left} {'and' if isinstance(node.operator, cst.And) else 'or'} {right})"
    if isinstance(node, cst.UnaryOperation):
        operand = _key(node.expression, names)
        return None if operand is None else f"{type(node.operator).__name__} {operand}"
    return None
