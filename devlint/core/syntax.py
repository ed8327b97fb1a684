"""Small, cheap questions about syntax: dotted names, device strings, guards."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from functools import cache

import libcst as cst

from devlint.core import torch_api, torch_facts
from devlint.core.lattice import Concrete

_DEVICE_STRING = re.compile(rf"^({'|'.join(torch_facts.DEVICE_TYPES)})(?::(\d+))?$")
_GUARD_WORDS = ("cuda", "gpu", "accel", "mps", "device", "available")
_ACCELERATOR_WORDS = frozenset({"cuda", "gpu", "gpus", "mps", "xpu", "npu", "hpu", "accelerator"})
_ACCELERATOR_TEXT = re.compile(r"^\s*(cuda|mps|xpu|npu|hpu)\b")


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def last_name(node: cst.BaseExpression) -> str | None:
    """The final identifier of a name or attribute chain (``args.device`` → ``device``)."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def root_name(node: cst.BaseExpression) -> str:
    """The variable an expression starts from: ``target.view_as(pred)`` → ``target``."""
    while True:
        if isinstance(node, cst.Attribute | cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call):
            node = node.func
        else:
            return node.value if isinstance(node, cst.Name) else ""


def parse_device_string(text: str) -> Concrete | None:
    """``"cuda:1"`` → Concrete("cuda", 1); None when the text is no device."""
    match = _DEVICE_STRING.match(text.strip())
    if match is None:
        return None
    index = match.group(2)
    return Concrete(match.group(1), int(index) if index is not None else None)


def string_value(node: cst.BaseExpression | None) -> str | None:
    """The value of a plain string literal, else None.

    A literal without prefix or backslash is its text between the quotes:
    reading it so skips ``literal_eval``, which parses a module per call.
    """
    if not isinstance(node, cst.SimpleString):
        return None
    raw = node.value
    if raw[0] in "'\"" and "\\" not in raw:
        quotes = 3 if raw[:3] in ('"""', "'''") else 1
        return raw[quotes:-quotes]
    value = node.evaluated_value
    return value if isinstance(value, str) else None


def mentions_accelerator(node: cst.CSTNode) -> bool:
    """Whether a condition looks like an accelerator check.

    ``torch.cuda.is_available()``, ``args.cuda``, ``use_gpu``,
    ``device.type == "cuda"``: under such a test, cpu and the accelerator join
    to "the accelerator when there is one" instead of unknown.
    """
    words = " ".join(text for text, _ in words_in(node)).lower()  # lowered once, not per word
    return any(word in words for word in _GUARD_WORDS)


def words_in(node: cst.CSTNode) -> Iterator[tuple[str, bool]]:
    """The names, attribute names and string literals of an expression, each with whether it
    is a string (``args.gpu`` → ``gpu``, ``args``; ``"cuda"`` → ``"cuda"``)."""
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            yield current.value, False
        elif isinstance(current, cst.Attribute):
            yield current.attr.value, False
            stack.append(current.value)
        elif isinstance(current, cst.SimpleString):
            yield current.value, True
        else:
            stack.extend(_operands(current))


def _operands(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The sub-expressions of the node types a condition is made of (cheaper than .children)."""
    if isinstance(node, cst.Call):
        return [node.func, *(arg.value for arg in node.args)]
    if isinstance(node, cst.Comparison):
        return [node.left, *(target.comparator for target in node.comparisons)]
    if isinstance(node, cst.BooleanOperation):
        return [node.left, node.right]
    if isinstance(node, cst.UnaryOperation):
        return [node.expression]
    if isinstance(node, (cst.Integer, cst.Float)):
        return []
    return child_nodes(node)


def is_device_name(name: str, extra: frozenset[str]) -> bool:
    """Whether a variable name holds a device (``device``, ``args.device``, ``dev``)."""
    last = name.rsplit(".", 1)[-1]
    lowered = last.lower()
    return "device" in lowered or lowered == "dev" or last in extra or name in extra


def is_loader_name(name: str) -> bool:
    """Whether a variable name holds a DataLoader (``train_loader``, ``val_dl``)."""
    lowered = name.rsplit(".", 1)[-1].lower()
    return "loader" in lowered or lowered == "dl" or lowered.endswith("_dl")


def is_rank_name(name: str) -> bool:
    """Whether a name holds a GPU index (``local_rank``, ``args.gpu``)."""
    lowered = name.rsplit(".", 1)[-1].lower()
    return lowered in ("rank", "gpu", "gpu_id", "device_id", "local_rank", "gpu_idx")


def receiver_name(function: cst.FunctionDef) -> str | None:
    """The name a method calls its receiver (``self``), None when it takes no parameter."""
    params = [*function.params.posonly_params, *function.params.params]
    return params[0].name.value if params else None


def statements_on_self(function: cst.FunctionDef) -> list[tuple[cst.CSTNode, str]]:
    """Statements of a method that assign ``self.<name>`` (``=``, ``+=``, ``: T =``) or move
    it in place (a bare ``self.<name>.to(...)``), with the name; nested defs excluded."""
    owner = receiver_name(function)
    if owner is None:
        return []
    found: list[tuple[cst.CSTNode, str]] = []
    pending: list[cst.BaseSuite] = [function.body]
    while pending:
        for statement in pending.pop().body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    for target in _assignment_targets(small):
                        if _is_attribute_of(target, owner):
                            found.append((small, target.attr.value))
            elif isinstance(statement, cst.BaseCompoundStatement) and not isinstance(
                statement, cst.FunctionDef | cst.ClassDef
            ):
                pending.extend(_suites(statement))
    return found


def assignments_to_self(function: cst.FunctionDef) -> list[tuple[cst.CSTNode, str]]:
    """``self.<name> = / += / : T =`` statements in a method's body."""
    return [
        (node, name)
        for node, name in statements_on_self(function)
        if not isinstance(node, cst.Expr)
    ]


def registers_on_self(function: cst.FunctionDef) -> bool:
    """Whether a method calls ``self.register_buffer``/``register_parameter``/``add_module``:
    methods only an ``nn.Module`` has."""
    owner = receiver_name(function)
    if owner is None:
        return False
    return any(
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in torch_facts.REGISTRATIONS
        and _is_attribute_of(node.func, owner)
        for node in expression_nodes(function.body)
    )


def _assignment_targets(small: cst.BaseSmallStatement) -> list[cst.BaseExpression]:
    if isinstance(small, cst.Assign):
        return [target.target for target in small.targets]
    if isinstance(small, cst.AugAssign | cst.AnnAssign):
        return [small.target]
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        func = small.value.func
        if isinstance(func, cst.Attribute) and func.attr.value in torch_api.moves():
            return [func.value]
    return []


def _is_attribute_of(target: cst.BaseExpression, owner: str) -> bool:
    return (
        isinstance(target, cst.Attribute)
        and isinstance(target.value, cst.Name)
        and target.value.value == owner
    )


def _suites(statement: cst.BaseCompoundStatement) -> list[cst.BaseSuite]:
    """The bodies of a compound statement: if/elif/else, loops, try/except/finally, with."""
    suites: list[cst.BaseSuite] = []
    for child in child_nodes(statement):
        if isinstance(child, cst.BaseSuite):
            suites.append(child)
        elif isinstance(child, cst.If | cst.Else | cst.ExceptHandler | cst.Finally):
            suites.extend(_suites(child) if isinstance(child, cst.If) else [child.body])
        elif isinstance(child, cst.ExceptStarHandler | cst.MatchCase):
            suites.append(child.body)
    return suites


def wrapper_test(test: cst.BaseExpression) -> tuple[str | None, bool]:
    """The name a condition checks for being a data-parallel wrapper, and whether it is negated.

    ``isinstance(model, nn.DataParallel)``, ``isinstance(m, (DP, DDP))``,
    ``hasattr(model, "module")`` and ``not`` of them; (None, False) otherwise.
    ``hasattr(model, "<a model's own attribute>")`` is the negated test: true only
    when the model is not wrapped.
    """
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negated = test.expression, not negated
    if not isinstance(test, cst.Call) or not isinstance(test.func, cst.Name) or len(test.args) != 2:
        return None, False
    subject, kind = test.args[0].value, test.args[1].value
    path = dotted_name(subject)
    if path is None:
        return None, False
    attribute = string_value(kind) if test.func.value == "hasattr" else None
    if attribute == "module":
        return path, negated
    if attribute is not None and not torch_api.is_wrapper_attribute(attribute):
        return path, not negated  # `hasattr(model, "test_run")`: a wrapper has no test_run
    names = [e.value for e in kind.elements] if isinstance(kind, cst.Tuple) else [kind]
    wrappers = torch_facts.WRAPPER_NAMES
    if test.func.value == "isinstance" and any(last_name(n) in wrappers for n in names):
        return path, negated
    return None, False


def descendants(
    node: cst.CSTNode, enter: Callable[[cst.CSTNode], bool] = lambda node: True
) -> Iterator[cst.CSTNode]:
    """Every node of code under ``node``, not below the nodes ``enter`` refuses (whitespace,
    operators and punctuation left out, as in ``child_nodes``)."""
    stack = child_nodes(node)
    while stack:
        current = stack.pop()
        yield current
        if enter(current):
            stack.extend(child_nodes(current))


def names_a_device(module: cst.Module) -> bool:
    """Whether the module's code names a device anywhere: a name or attribute about devices
    (``device``, ``torch.cuda``, ``use_gpu``) or an accelerator's string (``"cuda:0"``,
    ``f"cuda:{rank}"``)."""
    for node in descendants(module):
        if isinstance(node, cst.Name):
            lowered = node.value.lower()
            if "device" in lowered or not _ACCELERATOR_WORDS.isdisjoint(lowered.split("_")):
                return True
        elif isinstance(node, cst.SimpleString | cst.FormattedStringText):
            text = node.value if isinstance(node, cst.FormattedStringText) else _text_of(node)
            if _ACCELERATOR_TEXT.match(text):
                return True
    return False


def _text_of(literal: cst.SimpleString) -> str:
    """A string literal's text without its prefix and opening quotes."""
    return literal.value.lstrip("rbuRBU").lstrip("'\"")


def expression_nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every expression and statement node under ``root``, nested function and class
    bodies excluded.

    Walks dataclass fields directly (LibCST's ``children`` runs a visitor per
    node, several times slower) and skips whitespace, brackets, operators and
    punctuation, and the fields that hold only text (a name's ``value``).
    """
    stack: list[cst.CSTNode] = [root]
    pop, push, extend = stack.pop, stack.append, stack.extend  # the walk is hot: no lookups
    while stack:
        node = pop()
        yield node
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            kind = type(value)
            if kind is tuple or kind is list:
                extend([item for item in value if _walked(type(item))])
            elif _walked(kind):
                push(value)


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes directly under ``node``, nested functions and classes included; whitespace,
    brackets, operators and punctuation left out (as in ``expression_nodes``)."""
    found: list[cst.CSTNode] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            found.extend([item for item in value if _holds_code(type(item))])
        elif _holds_code(kind):
            found.append(value)
    return found


_SKIPPED_FIELDS = ("whitespace", "lpar", "rpar", "comma", "leading_lines", "lines_after", "newline")


@cache
def _child_fields(node_type: type) -> tuple[str, ...]:
    return tuple(
        field.name
        for field in dataclasses.fields(node_type)
        if field.type is not str and not any(part in field.name for part in _SKIPPED_FIELDS)
    )


@cache
def _walked(value_type: type) -> bool:
    """A node worth descending into: code (``_holds_code``) outside nested functions and
    classes."""
    return _holds_code(value_type) and not issubclass(value_type, cst.FunctionDef | cst.ClassDef)


@cache
def _holds_code(value_type: type) -> bool:
    """A node that is code: not whitespace, an operator or punctuation."""
    return (
        issubclass(value_type, cst.CSTNode)
        and value_type.__module__ != _TOKENS_MODULE
        and not issubclass(value_type, cst.BaseParenthesizableWhitespace)
        and value_type.__name__ not in ("Newline", "TrailingWhitespace", "EmptyLine", "Comment")
    )


_TOKENS_MODULE = cst.Dot.__module__
"""Where LibCST defines its operators and punctuation (``+``, ``.``, ``:``, ``=``)."""


def is_main_guard(test: cst.BaseExpression) -> bool:
    """``__name__ == "__main__"``: what only runs when the file is the program."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    sides = (test.left, target.comparator)
    return (
        isinstance(target.operator, cst.Equal)
        and any(isinstance(side, cst.Name) and side.value == "__name__" for side in sides)
        and any(string_value(side) == "__main__" for side in sides)
    )


def calls_on_self(function: cst.FunctionDef) -> set[str]:
    """The names of the ``self.<name>(...)`` calls in a method."""
    owner = receiver_name(function)
    if owner is None:
        return set()
    return {
        node.func.attr.value
        for node in expression_nodes(function.body)
        if isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and _is_attribute_of(node.func, owner)
    }


def without_not(test: cst.BaseExpression) -> tuple[cst.BaseExpression, bool]:
    """``test`` without its leading ``not``s, and whether it holds where ``test`` does
    (``not not x``: ``(x, True)``; ``not x``: ``(x, False)``)."""
    holds = True
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, holds = test.expression, not holds
    return test, holds


def none_test(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """``name is None`` → ``(name, True)``, ``name is not None`` → ``(name, False)``."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    if not isinstance(test.left, cst.Name) or not _is_none_literal(target.comparator):
        return None
    if isinstance(target.operator, cst.Is):
        return test.left.value, True
    if isinstance(target.operator, cst.IsNot):
        return test.left.value, False
    return None


def _is_none_literal(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def decorated_with(node: cst.FunctionDef, *names: str) -> bool:
    """Whether a bare decorator of ``node`` is one of ``names``: ``@staticmethod`` (no
    ``self`` even through an instance), ``@classmethod`` (the class as ``cls``)."""
    return any(
        isinstance(d.decorator, cst.Name) and d.decorator.value in names for d in node.decorators
    )


def device_handling(function: cst.FunctionDef) -> list[cst.CSTNode]:
    """Where a function's own code reads or chooses a device (``x.device``, ``x.is_cuda``,
    ``.to(...)``, ``device=``, ``x.new_zeros(...)``, ``torch.zeros_like(x)``): what shows
    that it expects its values on some device (nested functions included)."""
    return [node for node in descendants(function.body) if _reads_or_chooses_a_device(node)]


def _reads_or_chooses_a_device(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.Attribute):  # a value's `.device`, not the `torch.device` type
        return node.attr.value in ("device", "is_cuda") and dotted_name(node) != "torch.device"
    if not isinstance(node, cst.Call):
        return False
    return last_name(node.func) in torch_facts.DEVICE_FOLLOWING_CALLS or any(
        arg.keyword is not None and arg.keyword.value == "device" for arg in node.args
    )
