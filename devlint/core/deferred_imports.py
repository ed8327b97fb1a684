"""Imports a module's own top level never reads: a name handed on to importers (``from
.lora import LoraConfig`` in a package's ``__init__``), or read only inside its functions.
They are looked up when an importer reads the name or a function reading it runs.

A package's ``__init__`` often imports every submodule of the package, and a
module imports for its functions what its top level never touches. Running all
of that whenever one file imports one class made the analysis of a 600-line
script run 236 modules. A name whose only mention outside function bodies is
its import changes nothing the top level does, so its module can wait.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import libcst as cst

from devlint.core.syntax import child_nodes, dotted_name

_BLOCKS = (
    cst.If,
    cst.Else,
    cst.Try,
    cst.TryStar,
    cst.ExceptHandler,
    cst.ExceptStarHandler,
    cst.Finally,
    cst.With,
    cst.IndentedBlock,
    cst.SimpleStatementLine,
)


def deferred_imports(module: cst.Module) -> dict[cst.ImportFrom, frozenset[str]]:
    """For each ``from … import …`` at the module's top level (inside ``if``, ``try`` and
    ``with`` blocks too, never in a function or class), the local names nothing outside
    function bodies mentions again; torch's own names never wait."""
    imports = [node for node in _top_level_imports(module.body) if not _from_torch(node)]
    if not imports:
        return {}
    outside = _mentions_outside_functions(module)
    found: dict[cst.ImportFrom, frozenset[str]] = {}
    for statement in imports:
        waiting = frozenset(local for local in _local_names(statement) if outside[local] == 1)
        if waiting:
            found[statement] = waiting
    return found


def mentioned_names(function: cst.FunctionDef) -> set[str]:
    """Every spelling a ``Name`` in the function's body has."""
    names: set[str] = set()
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name:
            names.add(node.value)
        else:
            stack.extend(child_nodes(node))
    return names


def _from_torch(statement: cst.ImportFrom) -> bool:
    if statement.relative or statement.module is None:
        return False
    return (dotted_name(statement.module) or "").split(".", 1)[0] == "torch"


def _top_level_imports(statements: Sequence[cst.CSTNode]) -> list[cst.ImportFrom]:
    found: list[cst.ImportFrom] = []
    stack = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, cst.ImportFrom):
            found.append(node)
        elif isinstance(node, _BLOCKS):
            stack.extend(child for child in child_nodes(node) if _statement_like(child))
    return found


def _statement_like(node: cst.CSTNode) -> bool:
    return isinstance(node, (*_BLOCKS, cst.ImportFrom))


def _local_names(statement: cst.ImportFrom) -> list[str]:
    if isinstance(statement.names, cst.ImportStar):
        return []
    names = []
    for alias in statement.names:
        target = alias.asname.name if alias.asname is not None else alias.name
        if isinstance(target, cst.Name):
            names.append(target.value)
    return names


def _mentions_outside_functions(module: cst.Module) -> Counter[str]:
    """How often each spelling appears as a ``Name`` outside function bodies (attributes,
    parameters, decorators and keywords included: any mention keeps an import eager)."""
    outside: Counter[str] = Counter()
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name:
            outside[node.value] += 1
        elif type(node) is cst.FunctionDef:
            stack.extend(child for child in child_nodes(node) if child is not node.body)
        else:
            stack.extend(child_nodes(node))
    return outside
