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

from devlint.core.syntax import dotted_name

_STABLE_CALLS = frozenset(
    {"torch.cuda.is_available", "torch.backends.mps.is_available", "torch.xpu.is_available"}
)
_LITERALS = (cst.Integer, cst.Float, cst.SimpleString)
_NEGATED = {cst.Is: cst.IsNot, cst.IsNot: cst.Is, cst.Equal: cst.NotEqual, cst.NotEqual: cst.Equal}
_TEXT = cst.Module([])


@dataclass(frozen=True, slots=True)
class Flag:
    """A stable test: its ``key`` (the text of its positive form), whether the ``if`` body runs
    when the key holds (``positive``) and the dotted names whose rebinding changes it."""

    key: str
    positive: bool
    names: tuple[str, ...]


def flag_of(test: cst.BaseExpression) -> Flag | None:
    """The flag an ``if`` test reads, or None when the test may change between evaluations."""
    positive = True
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, positive = test.expression, not positive
    test = _strip_parentheses(test)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        operator = type(test.comparisons[0].operator)
        if operator in (cst.IsNot, cst.NotEqual):  # key on `is` / `==`: `is not` is its negation
            positive = not positive
            comparison = test.comparisons[0]
            test = test.with_changes(
                comparisons=[comparison.with_changes(operator=_NEGATED[operator]())]
            )
    names: list[str] = []
    if not _stable(test, names):
        return None
    return Flag(_TEXT.code_for_node(test), positive, tuple(sorted(set(names))))


def _strip_parentheses(test: cst.BaseExpression) -> cst.BaseExpression:
    return test.with_changes(lpar=[], rpar=[]) if getattr(test, "lpar", None) else test


def _stable(node: cst.CSTNode, names: list[str]) -> bool:
    """Whether ``node`` reads only names and literals; collects the names and their prefixes."""
    if isinstance(node, cst.Name | cst.Attribute):
        path = dotted_name(node)
        if path is None:
            return False
        parts = path.split(".")
        names.extend(".".join(parts[: i + 1]) for i in range(len(parts)))
        return True
    if isinstance(node, _LITERALS):
        return True
    if isinstance(node, cst.Call):
        return dotted_name(node.func) in _STABLE_CALLS and not node.args
    if isinstance(node, cst.Comparison):
        return _stable(node.left, names) and all(
            _stable(target.comparator, names) for target in node.comparisons
        )
    if isinstance(node, cst.BooleanOperation):
        return _stable(node.left, names) and _stable(node.right, names)
    if isinstance(node, cst.UnaryOperation):
        return _stable(node.expression, names)
    return False
