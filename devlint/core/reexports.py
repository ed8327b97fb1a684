"""Names a module imports only to hand on (``from .lora import LoraConfig`` in a package's
``__init__``): what an importer may look up when it asks, not when the module runs.

A package's ``__init__`` often imports every submodule of the package. Running
each of them whenever one file imports one class from the package made the
analysis of a 600-line script run 236 modules. A name the module's own code
never mentions again (no other ``Name`` with its spelling anywhere in the file)
changes nothing the module itself does, so its import can wait until an
importer reads it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import libcst as cst

from devlint.core.syntax import child_nodes

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


def reexported_names(module: cst.Module) -> dict[cst.ImportFrom, frozenset[str]]:
    """For each ``from … import …`` at the module's top level (inside ``if``, ``try`` and
    ``with`` blocks too, never in a function or class), the local names nothing else in
    the file mentions."""
    imports = _top_level_imports(module.body)
    if not imports:
        return {}
    counts = _name_counts(module)
    found: dict[cst.ImportFrom, frozenset[str]] = {}
    for statement in imports:
        names = frozenset(local for local in _local_names(statement) if counts[local] == 1)
        if names:
            found[statement] = names
    return found


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


def _name_counts(module: cst.Module) -> Counter[str]:
    """How often each spelling appears as a ``Name`` anywhere in the file (attributes,
    parameters and keywords included: a mention of any sort keeps an import eager)."""
    counts: Counter[str] = Counter()
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name:
            counts[node.value] += 1
        else:
            stack.extend(child_nodes(node))
    return counts
