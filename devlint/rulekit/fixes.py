"""The helpers rules build their fixes with: node text, keyword arguments, scopes, imports.

They read only the analysed file (``Facts``) and its LibCST tree, so rules depend on
the core and nothing else; applying fixes (``devlint check --fix``) is ``devlint.running.fix``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator

import libcst as cst

from devlint.core.events import Facts
from devlint.core.syntax import dotted_name

_RECEIVERS = (
    cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Dict, cst.Set,
    cst.ListComp, cst.DictComp, cst.SetComp, cst.SimpleString, cst.FormattedString,
)  # fmt: skip
_NESTED_SCOPES = (
    cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
    cst.GeneratorExp,
)  # fmt: skip


def receiver_text(facts: Facts, node: cst.BaseExpression) -> str:
    """The source of ``node`` as the receiver of a method call, parenthesised if needed."""
    text = facts.module.code_for_node(node)
    if getattr(node, "lpar", None) or isinstance(node, _RECEIVERS):
        return text
    return f"({text})"


def with_keyword(call: cst.Call, keyword: str, value: str) -> cst.Call | None:
    """``call`` with ``keyword=value`` appended in the call's own layout; None when a
    ``*args``/``**kwargs`` argument may pass it already."""
    if any(arg.star for arg in call.args):
        return None
    no_space = cst.SimpleWhitespace("")
    new = cst.Arg(
        cst.parse_expression(value),
        keyword=cst.Name(keyword),
        equal=cst.AssignEqual(whitespace_before=no_space, whitespace_after=no_space),
    )
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    if len(args) > 1 and isinstance(args[-2].comma, cst.Comma):
        separator = args[-2].comma.whitespace_after  # as between the existing arguments
    elif isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        separator = call.whitespace_before_args  # one argument per line
    else:
        separator = cst.SimpleWhitespace(" ")
    if isinstance(last.comma, cst.Comma):  # a trailing comma stays trailing
        new = new.with_changes(comma=last.comma)
    else:  # what closed the last argument (a newline before ")") now closes the new one
        new = new.with_changes(whitespace_after_arg=last.whitespace_after_arg)
        last = last.with_changes(whitespace_after_arg=no_space)
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=separator))
    return call.with_changes(args=[*args, new])


def ancestors(facts: Facts, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes enclosing ``node``, innermost first (the parent map is built once per file)."""
    table = facts.cache.get("parents")
    if table is None:
        table = facts.cache["parents"] = {
            child: parent for parent, child in _edges(facts.module, lambda node: False)
        }
    while node in table:
        node = table[node]
        yield node


def is_bound_at(facts: Facts, name: str, at: cst.CSTNode) -> bool:
    """Whether the variable ``name`` holds a value where ``at`` runs.

    In the innermost scope it must be a parameter or be assigned before ``at``
    (assigned later, it is an unbound local there); in enclosing functions and
    at module level any binding counts, since they run before the code inside.
    Class bodies do not enclose their methods.
    """
    position = facts.span_of(at)[0]
    innermost = True
    for scope in ancestors(facts, at):
        if not isinstance(scope, cst.FunctionDef | cst.Lambda | cst.ClassDef | cst.Module):
            continue
        if isinstance(scope, cst.ClassDef) and not innermost:
            continue
        bound = _bindings(facts, scope)
        if name in bound:
            return not innermost or bound[name] < position
        innermost = False
    return False


def torch_spelling(facts: Facts, qualname: str) -> str | None:
    """How the file names ``qualname`` through its top-level imports (``torch.nn.ModuleList``
    is ``nn.ModuleList`` after ``from torch import nn``); None when it cannot."""
    best: tuple[int, str] | None = None
    for local, imported in _top_level_imports(facts.module):
        if qualname == imported or qualname.startswith(imported + "."):
            spelled = local + qualname[len(imported) :]
            if best is None or len(imported) > best[0]:
                best = (len(imported), spelled)
    return best[1] if best is not None else None


def statement_indent(facts: Facts, node: cst.CSTNode) -> str | None:
    """The indentation of the line ``node`` starts, when ``node`` is the first thing on it."""
    text = facts.line_before(node)
    return text if not text.strip() else None


def _edges(
    root: cst.CSTNode, stop: Callable[[cst.CSTNode], bool]
) -> Iterator[tuple[cst.CSTNode, cst.CSTNode]]:
    """(parent, child) for every node under ``root``, not below nodes ``stop`` accepts.

    Reads the dataclass fields directly: several times faster than a CSTVisitor.
    """
    stack = [root]
    while stack:
        node = stack.pop()
        for name in _field_names(type(node)):
            value = getattr(node, name)
            for child in value if isinstance(value, list | tuple) else (value,):
                if isinstance(child, cst.CSTNode):
                    yield node, child
                    if not stop(child):
                        stack.append(child)


@functools.cache
def _field_names(node_type: type) -> tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(node_type))


def _bindings(facts: Facts, scope: cst.CSTNode) -> dict[str, tuple[int, int]]:
    """Names a scope binds, each with the position of its first binding."""
    cache = facts.cache.setdefault("bindings", {})
    found = cache.get(scope)
    if found is None:
        names: list[cst.Name] = []
        if isinstance(scope, cst.FunctionDef | cst.Lambda):
            names += [param.name for param in _all_params(scope.params)]
        body = scope if isinstance(scope, cst.Module) else scope.body
        if not isinstance(scope, cst.Lambda):
            for _, node in _edges(body, lambda node: isinstance(node, _NESTED_SCOPES)):
                names += _bound_by(node)
        found = {}
        for name in names:
            found.setdefault(name.value, facts.span_of(name)[0])
        cache[scope] = found
    return found


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    extra = [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return [*params.posonly_params, *params.params, *params.kwonly_params, *extra]


def _bound_by(node: cst.CSTNode) -> list[cst.Name]:
    """The names one node binds in its scope."""
    if isinstance(node, cst.FunctionDef | cst.ClassDef):
        return [node.name]
    if isinstance(node, cst.Assign):
        return [name for target in node.targets for name in target_names(target.target)]
    if isinstance(node, cst.AnnAssign) and node.value is None:
        return []
    if isinstance(node, cst.AnnAssign | cst.AugAssign | cst.For | cst.NamedExpr):
        return target_names(node.target)
    if isinstance(node, cst.WithItem | cst.ExceptHandler):
        alias = node.asname if isinstance(node, cst.WithItem) else node.name
        return target_names(alias.name) if alias is not None else []
    if isinstance(node, cst.Import):
        return [_import_root(alias) for alias in node.names]
    if isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
        return [
            name
            for alias in node.names
            for name in target_names(alias.asname.name if alias.asname else alias.name)
        ]
    return []


def _import_root(alias: cst.ImportAlias) -> cst.Name:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name
    root = alias.name
    while isinstance(root, cst.Attribute):
        root = root.value
    return root


def target_names(node: cst.BaseExpression) -> list[cst.Name]:
    """The variables an assignment or loop target binds (``a, (b, *c)`` → a, b, c)."""
    if isinstance(node, cst.Name):
        return [node]
    if isinstance(node, cst.Tuple | cst.List):
        return [name for element in node.elements for name in target_names(element.value)]
    if isinstance(node, cst.StarredElement):
        return target_names(node.value)
    return []


def _top_level_imports(module: cst.Module) -> Iterator[tuple[str, str]]:
    """(local name, qualified name) for each module-level import."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    name = dotted_name(alias.name)
                    if name is None:
                        continue
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        yield alias.asname.name.value, name
                    else:
                        root = name.split(".", 1)[0]
                        yield root, root
            elif isinstance(small, cst.ImportFrom) and not small.relative:
                source = dotted_name(small.module) if small.module is not None else None
                if source is None or isinstance(small.names, cst.ImportStar):
                    continue
                for alias in small.names:
                    name = dotted_name(alias.name)
                    local = alias.asname.name if alias.asname is not None else alias.name
                    if name is not None and isinstance(local, cst.Name):
                        yield local.value, f"{source}.{name}"
