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
from devlint.core.deferred_imports import mentioned_names
from devlint.core.positions import NotInModule, Positions
from devlint.core.values import UNKNOWN_VALUE, Kind, Referent, Value


@dataclass(eq=False)
class ModuleScope(Referent):
    """A project module after its top level ran: its names, and where its code is.

    ``name`` is how messages name the file (``model.py``); ``submodule`` finds
    ``package.name`` when the package's own names do not bind it.
    """

    name: str
    module: cst.Module
    path: str = ""  # the file, for locations (``name`` is for messages)
    env: Env = field(default_factory=Env)
    submodule: Callable[[str], ModuleScope | None] = lambda name: None
    deferred: dict[str, Callable[[], Value]] = field(default_factory=dict)
    """Imported names its top level never reads, looked up when first read
    (``core.deferred_imports``)."""
    waiting: frozenset[str] = frozenset()
    """Every name ever deferred, looked up since or not."""
    _read_by: dict[cst.FunctionDef, frozenset[str]] = field(default_factory=dict, repr=False)
    _positions: Positions | None = field(default=None, init=False, repr=False)

    def member(self, name: str) -> Value | None:
        """What ``module.name`` is, None when the module does not say."""
        value = self.bound(name)
        if value is not None:
            return value
        scope = self.submodule(name)
        return module_value(scope) if scope is not None else None

    def bound(self, name: str) -> Value | None:
        """What the top level bound ``name`` to, None when it did not bind it."""
        value = self.env.get(name)
        if value is None and name in self.deferred:
            value = self.deferred.pop(name)()  # popped first: a re-export cycle is unbound
            self.env.update(name, value)
        return value

    def globals_for(self, function: cst.FunctionDef, closure: Env) -> Env:
        """What a running function of this module sees outside its own names: ``closure``,
        under the deferred imports it reads, looked up now."""
        if not self.waiting:
            return closure
        names = self._read_by.get(function)
        if names is None:
            names = self._read_by[function] = self.waiting & mentioned_names(function)
        if not names:
            return closure
        found = {name: self.bound(name) for name in names}
        return Env({name: value for name, value in found.items() if value is not None}, closure)

    def line_of(self, node: cst.CSTNode) -> int | None:
        """The line of one of this module's nodes; None for a node of another module."""
        if self._positions is None:
            self._positions = Positions(self.module)
        try:
            return self._positions.span(node)[0][0]
        except NotInModule:
            return None


Given = tuple[tuple[str, Value], ...]
"""What one call gives a function: its parameters' names, each with the value passed."""


class Importer(Protocol):
    """Finds the project module an import statement of one file names."""

    def module(self, name: str, level: int, folders: tuple[str, ...] = ()) -> ModuleScope | None:
        """``import name`` (``level`` leading dots): the module, None when not in the project.
        ``folders``: what the importing file added to ``sys.path`` before this import."""
        ...

    def mentions(self, name: str) -> bool | None:
        """Whether the project's code mentions ``name`` other than where a function of that
        name is defined (None: not known)."""
        ...

    def calls_into(self, name: str, line: int) -> list[Given] | None:
        """What each call in the project's other files gives the function ``name`` that the
        importing file defines at ``line`` (None: not known)."""
        ...


def project_module(
    importer: Importer | None, name: str, level: int, folders: tuple[str, ...]
) -> ModuleScope | None:
    """The project module an import names, None when it is not one (torch never is)."""
    if importer is None or (not level and name.split(".", 1)[0] == "torch"):
        return None
    return importer.module(name, level, folders)


def imported_name(
    importer: Importer | None,
    folders: tuple[str, ...],
    module: str | None,
    level: int,
    name: str,
    noted: Callable[[ModuleScope], None] = lambda scope: None,
) -> Value:
    """What ``from module import name`` binds: the project module's own value or
    submodule; a name outside the project a namespace (a relative one unknown).
    ``noted`` hears of each project module reached."""

    def found(dotted: str) -> ModuleScope | None:
        scope = project_module(importer, dotted, level, folders)
        if scope is not None:
            noted(scope)
        return scope

    scope = found(module or "") if module or level else None
    if scope is not None:
        value = scope.bound(name)
        if value is not None:
            return value
    submodule = found(f"{module}.{name}" if module else name)
    if submodule is not None:
        return module_value(submodule)
    if scope is not None or module is None or level:
        return UNKNOWN_VALUE
    return Value(Kind.NAMESPACE, ref=f"{module}.{name}")


def module_value(scope: ModuleScope) -> Value:
    """The value a name bound to a project module has."""
    return Value(Kind.PROJECT_MODULE, ref=scope)


def star_names(scope: ModuleScope) -> list[str]:
    """What ``from module import *`` binds: the names of its ``__all__`` when its top level
    lists them as literal strings, else every bound name without a leading underscore."""
    listed = _listed_in_all(scope.module)
    if listed is not None:
        return listed
    names = [*scope.env.bindings, *scope.deferred]
    return [name for name in dict.fromkeys(names) if not name.startswith("_") and "." not in name]


def _listed_in_all(module: cst.Module) -> list[str] | None:
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and small.targets[0].target.value == "__all__"
                and isinstance(small.value, cst.List | cst.Tuple)
            ):
                names = [
                    element.value.evaluated_value
                    for element in small.value.elements
                    if isinstance(element.value, cst.SimpleString)
                ]
                return [name for name in names if isinstance(name, str)]
    return None
