"""The per-file pass: one abstract interpretation over the LibCST tree.

Branches join, loops run to a fixpoint, functions defined in the file are
analysed once on their own and again for each distinct set of argument values
they are called with, classes remember what ``__init__`` leaves on self. The
parts of the interpreter (``core/state.py`` lists them) are assembled here;
this module runs a file through them and hands rules the facts.
"""

from __future__ import annotations

import libcst as cst

from devlint.config import Settings
from devlint.core.calls import Calls
from devlint.core.classes import Classes
from devlint.core.events import Facts, ProjectFiles
from devlint.core.expressions import Expressions
from devlint.core.flow import Flow
from devlint.core.functions import Functions
from devlint.core.imports import Importer, ModuleScope
from devlint.core.state import AnalysisState
from devlint.core.wrappers import Wrappers


def analyse(module: cst.Module, settings: Settings, importer: ProjectFiles | None = None) -> Facts:
    """Analyse one parsed file; the facts are shared by every rule. ``importer`` finds the
    project modules it imports (without one, every import is outside the file's view)."""
    state = AnalysisState(module, frozenset(settings.device_names), importer=importer)
    _interpreter(state).run_module(module)
    facts = Facts(
        module,
        values=state.values,
        runtime_device=state.runtime_device,
        spawn_start_method=state.spawn_start_method,
        sets_cuda_device=state.sets_cuda_device,
        places_tensors=state.places_tensors,
        imported=state.imported,
        importer=importer,
    )
    facts.collect(state.events)
    return facts


def summarise(scope: ModuleScope, settings: Settings, importer: Importer | None) -> None:
    """Run another file's top level, as a file importing it sees it, into ``scope.env``.

    What its code reports belongs to its own analysis; here it only says what its
    names are bound to: classes with what ``__init__`` registers, functions to run
    at each call, module-level devices. Imported names its top level never reads (a
    re-export, a name only its functions read) are looked up when an importer reads them
    or such a function runs (``scope.deferred``, ``core.deferred_imports``).
    """
    state = AnalysisState(
        scope.module, frozenset(settings.device_names), importer=importer, home=scope
    )
    scope.env = _interpreter(state).run_top_level(scope.module)


def _interpreter(state: AnalysisState) -> Functions:
    """The parts of one file's interpreter, each connected to the parts it calls; a run
    starts with the functions part (a module is run as a function's body is)."""
    expressions, calls, wrappers = Expressions(state), Calls(state), Wrappers(state)
    flow, functions, classes = Flow(state), Functions(state), Classes(state)
    expressions.connect(calls=calls, wrappers=wrappers, flow=flow)
    calls.connect(
        expressions=expressions, wrappers=wrappers, flow=flow, functions=functions, classes=classes
    )
    wrappers.connect(calls=calls, flow=flow)
    flow.connect(expressions=expressions, calls=calls, functions=functions, classes=classes)
    functions.connect(expressions=expressions, flow=flow)
    classes.connect(expressions=expressions, functions=functions)
    return functions
