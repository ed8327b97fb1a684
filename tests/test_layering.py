"""The package's layering: what each layer may import, no import cycle, and the module
table of docs/architecture.md checked against the modules that exist.

The parts of the interpreter call one another (an expression holds a call that
runs a function body that holds expressions); they name each other by the
protocols of ``core/roles.py``, so the core has no import cycle even counting
the imports made for annotations only.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "devlint"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

CORE_MAY_IMPORT = frozenset({"devlint.config", "devlint.diagnostic"})
"""Outside ``devlint.core``, the analysis reads only its settings and the severity type."""

RULES_MAY_IMPORT = frozenset({"devlint.diagnostic", "devlint.rule"})
"""Rules read the core's facts and build findings and fixes with the rule kit: never the
engine, the ``--fix`` driver, a front end or the harness."""

GROUPS = ("devlint.inputs", "devlint.project", "devlint.running")
"""The package root's groups, lowest first: each imports nothing from a group after it."""

RUNNING_IMPORTED_BY = ("devlint.frontends", "devlint.notebooks", "devlint.running")
"""What may run a lint: the front ends and notebooks, and ``running/`` itself."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _run_time_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:``: imports made for
    annotations only are never run, so they cannot make a cycle."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and ast.unparse(child.test) == "TYPE_CHECKING":
                stack.extend(child.orelse)
            else:
                stack.append(child)


def _imported(
    name: str, path: Path, modules: dict[str, Path], type_only: bool = False
) -> Iterator[str]:
    """Every devlint module ``path`` imports when it runs, at module level or inside a
    function; with ``type_only``, also those imported for annotations only."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree) if type_only else _run_time_nodes(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            submodules = [f"{base}.{alias.name}" for alias in node.names]
            targets = [sub for sub in submodules if sub in modules] or [base]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def _graph(type_only: bool = False) -> dict[str, set[str]]:
    """Who imports whom (with ``type_only``, for annotations too). ``devlint.rules``
    imports each of its modules at run time (``all_rules`` walks the package), so those
    edges count too."""
    modules = _modules()
    graph = {name: set(_imported(name, path, modules, type_only)) for name, path in modules.items()}
    graph["devlint.rules"] |= {name for name in modules if name.startswith("devlint.rules.")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycle_in_the_package():
    assert _cycles(_graph()) == []


def test_no_import_cycle_in_the_core_even_for_annotations():
    """The interpreter's parts name each other by ``core/roles.py``'s protocols: a
    module of the core that imported another part's class, even under
    ``TYPE_CHECKING``, would close a circle through the part it calls back."""
    graph = _graph(type_only=True)
    core = {
        name: {target for target in imported if target.startswith("devlint.core")}
        for name, imported in graph.items()
        if name.startswith("devlint.core")
    }
    assert _cycles(core) == []


def test_a_type_only_import_counts_for_annotations_only(tmp_path):
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from devlint.b import B\n"
    path = tmp_path / "a.py"
    path.write_text(source, encoding="utf-8")
    modules = {"devlint.a": path, "devlint.b": path}
    assert list(_imported("devlint.a", path, modules)) == []
    assert list(_imported("devlint.a", path, modules, type_only=True)) == ["devlint.b"]


def _inside(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_groups_import_downwards():
    """Reading a file knows nothing of its project, and neither knows how a lint runs: a
    reader can draw inputs → project → running, even counting annotations."""
    graph = _graph(type_only=True)
    for rank, group in enumerate(GROUPS):
        for name, imported in graph.items():
            if _inside(name, group):
                later = {m for m in imported for g in GROUPS[rank + 1 :] if _inside(m, g)}
                assert later == set(), (name, sorted(later))


def test_only_the_front_ends_and_notebooks_run_lints():
    """The modules at the package root (the vocabulary: diagnostics, rules, settings), the
    inputs, the project, the core, the rules and the harness never import ``running/``."""
    graph = _graph(type_only=True)
    for name, imported in graph.items():
        if not any(_inside(name, package) for package in RUNNING_IMPORTED_BY):
            running = {m for m in imported if _inside(m, "devlint.running")}
            assert running == set(), (name, sorted(running))


def test_the_hand_written_torch_facts_import_nothing():
    """``core/torch_facts.py`` is data every module of the core reads: an import there
    could close a circle through the module it imports."""
    assert _graph(type_only=True)["devlint.core.torch_facts"] == set()


def test_the_core_imports_nothing_above_it():
    graph = _graph()
    for name, imported in graph.items():
        if name.startswith("devlint.core"):
            outside = {m for m in imported if not m.startswith("devlint.core")}
            assert outside <= CORE_MAY_IMPORT, (name, sorted(outside - CORE_MAY_IMPORT))


def test_rules_import_only_the_core_and_the_rule_kit():
    graph = _graph()
    rules = [name for name in graph if name.startswith("devlint.rules.")]
    assert len(rules) > 10
    for name in rules:
        outside = {m for m in graph[name] if not m.startswith(("devlint.core", "devlint.rulekit"))}
        assert outside <= RULES_MAY_IMPORT, (name, sorted(outside - RULES_MAY_IMPORT))


def test_the_rule_kit_depends_on_the_core_only():
    """Even for annotations: the kit is what rules are written with, over the core's
    facts; the engine, the rules and the front ends are above it."""
    graph = _graph(type_only=True)
    kit = [name for name in graph if name.startswith("devlint.rulekit")]
    assert len(kit) >= 5
    for name in kit:
        outside = {m for m in graph[name] if not m.startswith(("devlint.core", "devlint.rulekit"))}
        assert outside <= CORE_MAY_IMPORT, (name, sorted(outside - CORE_MAY_IMPORT))


@pytest.mark.parametrize(
    "layer",
    ["devlint.core.analysis", "devlint.rules", "devlint.clash_owners", "devlint.running.engine"],
)
def test_importing_a_layer_loads_nothing_above_it(layer):
    """Imported for real, in a fresh interpreter: what the static graph cannot see."""
    above = [
        "devlint.frontends",
        "devlint.harness",
        "devlint.running.fix",
        "devlint.running.workers",
    ]
    if layer == "devlint.core.analysis":
        above += ["devlint.rules", "devlint.rule", "devlint.running.engine", "devlint.clash_owners"]
    code = (
        "import importlib, sys\n"
        f"importlib.import_module({layer!r})\n"
        f"loaded = sorted(m for m in sys.modules if any(m == a or m.startswith(a + '.') "
        f"for a in {above!r}))\n"
        "print(loaded)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def _documented() -> set[str]:
    """The modules the table in docs/architecture.md names (first column)."""
    names = set()
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        found = re.match(r"\| `([^`]+)`", line)
        if found:
            names.add(found.group(1))
    return names


def _documentable() -> set[str]:
    """Every module of the package as the table names it: the harness is one row (it
    has its own page), rules one pattern, packages' ``__init__`` none."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("harness/"):
            names.add("harness/")
        elif re.fullmatch(r"rules/dvl\d{3}_\w+\.py", relative):
            names.add("rules/dvlNNN_*.py")
        elif path.name != "__init__.py":
            names.add(relative)
    return names


def test_the_architecture_table_names_every_module_and_only_those():
    documented, documentable = _documented(), _documentable()
    assert sorted(documentable - documented) == [], "modules missing from docs/architecture.md"
    assert sorted(documented - documentable) == [], "rows for modules that do not exist"
