"""Other files of the project as an importing file sees them.

The core reads no files: the engine hands the analysis an ``Importer`` that
answers which module of the project an import names, already run to the end
of its top level (its ``ModuleScope``). What it cannot answer (the standard
library, installed packages, a module being imported in a cycle) stays what
it was before: a name outside the project, never "on the CPU".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import libcst as cst

from devlint.core.binder import Env
from devlint.core.positions import NotInModule, Positions
from devlint.core.values import Kind, Value


@dataclass(eq=False)
class ModuleScope:
    """A project module after its top level ran: its names, and where its code is.

    ``name`` is how messages name the file (``model.py``); ``submodule`` finds
    ``package.name`` when the package's own names do not bind it.
    """

    name: str
    module: cst.Module
    path: str = ""  # the file, for locations (``name`` is for messages)
    env: Env = field(default_factory=Env)
    submodule: Callable[[str], ModuleScope | None] = lambda name: None
    _positions: Positions | None = field(default=None, init=False, repr=False)

    def member(self, name: str) -> Value | None:
        """What ``module.name`` is, None when the module does not say."""
        value = self.env.get(name)
        if value is not None:
            return value
        scope = self.submodule(name)
        return module_value(scope) if scope is not None else None

    def line_of(self, node: cst.CSTNode) -> int | None:
        """The line of one of this module's nodes; None for a node of another module."""
        if self._positions is None:
            self._positions = Positions(self.module)
        try:
            return self._positions.span(node)[0][0]
        except NotInModule:
            return None


class Importer(Protocol):
    """Finds the project module an import statement of one file names."""

    def module(self, name: str, level: int, folders: tuple[str, ...] = ()) -> ModuleScope | None:
        """``import name`` (``level`` leading dots): the module, None when not in the project.
        ``folders``: what the importing file added to ``sys.path`` before this import."""
        ...


def module_value(scope: ModuleScope) -> Value:
    """The value a name bound to a project module has."""
    return Value(Kind.PROJECT_MODULE, ref=scope)
