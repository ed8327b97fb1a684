"""The project index: each module read and run once, cycles end, edits and buffers count."""

from __future__ import annotations

import os
from pathlib import Path

import libcst as cst
import pytest

from devlint.config import Settings
from devlint.core.analysis import analyse
from devlint.core.lattice import Concrete
from devlint.core.values import Kind
from devlint.project import index as project_index
from devlint.project.finder import Project
from devlint.project.index import ProjectIndex
from devlint.running import engine

CONFIG = "import torch\ndevice = torch.device('cuda')\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    return tmp_path


def index_of(root: Path) -> ProjectIndex:
    return ProjectIndex(Project(root), Settings())


def test_a_module_imported_by_many_files_is_parsed_once(root: Path, parsed: list[str]) -> None:
    (root / "config.py").write_text(CONFIG)
    index = index_of(root)
    scopes = [index.importer_for(root / f"m{n}.py").module("config", 0) for n in range(3)]
    assert len(parsed) == 1
    assert scopes[0] is scopes[1] is scopes[2]
    assert scopes[0].env.get("device").kind is Kind.DEVICE


@pytest.mark.parametrize(("linted_text", "parses"), [(CONFIG, 1), (CONFIG + "# unsaved\n", 2)])
def test_a_module_linted_before_a_file_imports_it_is_parsed_once(
    root: Path, parsed: list[str], linted_text: str, parses: int
) -> None:
    """A run lints `config.py` before `train.py` imports it: the import takes the tree the
    lint parsed, unless the text on disk is not the text that was linted."""
    (root / "config.py").write_text(CONFIG)
    index = index_of(root)
    linted = index.importer_for(root / "config.py").parse(linted_text)
    scope = index.importer_for(root / "train.py").module("config", 0)
    assert len(parsed) == parses
    assert (scope.module is linted) is (parses == 1)
    assert scope.env.get("device").kind is Kind.DEVICE


def test_linted_trees_wait_for_importers_up_to_a_number_of_lines(
    root: Path, parsed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(project_index, "KEPT_LINES", 5)
    index = index_of(root)
    for name in ("near", "far"):
        (root / f"{name}.py").write_text(CONFIG)  # 3 lines as counted
    index.importer_for(root / "far.py").parse(CONFIG)
    index.importer_for(root / "near.py").parse(CONFIG)  # 6 lines: `far` is let go
    index.importer_for(root / "train.py").module("near", 0)
    assert len(parsed) == 2
    index.importer_for(root / "train.py").module("far", 0)
    assert len(parsed) == 3


@pytest.mark.parametrize(
    ("held_lines", "let_others_go", "kept"), [(3, True, True), (2, True, False), (2, False, True)]
)
def test_the_index_of_a_project_left_behind_goes_past_the_lines_held(
    tmp_path: Path,
    parsed: list[str],
    monkeypatch: pytest.MonkeyPatch,
    held_lines: int,
    let_others_go: bool,
    kept: bool,
) -> None:
    """A run moves from project ``a`` to project ``b``: ``a``'s modules (3 lines) stay in
    view while the lines held fit, and are parsed again when ``a`` comes back otherwise.
    The index in use is never dropped, whatever it holds; an editor keeps every index."""
    monkeypatch.setattr(project_index, "_INDEXES", {})
    monkeypatch.setattr(project_index, "HELD_LINES", held_lines)
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pyproject.toml").write_text("")
        (tmp_path / name / "config.py").write_text(CONFIG)

    def import_config(name: str) -> ProjectIndex:
        index = project_index.index_of(Project(tmp_path / name), Settings(), let_others_go)
        index.importer_for(tmp_path / name / "train.py").module("config", 0)
        return index

    first = import_config("a")
    assert import_config("b").lines_held == 3
    again = import_config("a")
    assert (again is first) is kept
    assert len(parsed) == (2 if kept else 3)
    assert again.lines_held == 3


def test_an_import_cycle_ends_and_the_module_in_the_cycle_is_seen_from_outside(root: Path) -> None:
    """Names the top levels use (``G = g``) are imported as each module runs: ``b`` runs
    inside ``a`` and finds ``a`` still running."""
    (root / "a.py").write_text("from b import g\n\nG = g\n\ndef f():\n    return g()\n")
    (root / "b.py").write_text("from a import f\n\nF = f\n\ndef g():\n    return f()\n")
    scope = index_of(root).importer_for(root / "main.py").module("a", 0)
    assert scope is not None and scope.env.get("f").kind is Kind.FUNCTION
    b = scope.env.get("g").ref.home
    assert b.name == "b.py"
    assert b.env.get("f").ref == "a.f"  # `a` was still running: a name from outside, as before


def test_functions_of_two_files_that_call_each_other_see_each_other(root: Path) -> None:
    """Names only functions read are looked up when asked for: both modules have run."""
    (root / "a.py").write_text("from b import g\n\ndef f():\n    return g()\n")
    (root / "b.py").write_text("from a import f\n\ndef g():\n    return f()\n")
    a = index_of(root).importer_for(root / "main.py").module("a", 0)
    b = a.member("g").ref.home
    assert b.name == "b.py"
    assert b.member("f").ref is a.env.get("f").ref


def test_a_name_only_a_function_reads_waits_until_the_function_runs(
    root: Path, parsed: list[str]
) -> None:
    train = cst.parse_module("from helpers import zeros\n\ny = zeros()\n")
    call = train.body[1].body[0].value
    (root / "config.py").write_text(CONFIG)
    helpers = (
        "import torch\nfrom config import device\n\n"
        "def zeros():\n    return torch.zeros(3, device=device)\n"
    )
    (root / "helpers.py").write_text(helpers)
    parsed.clear()
    importer = index_of(root).importer_for(root / "train.py")
    assert importer.module("helpers", 0) is not None
    assert parsed == [helpers]
    facts = analyse(train, Settings(), importer)
    assert parsed == [helpers, CONFIG]
    assert facts.values[call].device == Concrete("cuda")
    assert {path.name for path, _ in importer.uses()} == {"helpers.py", "config.py"}


def test_what_is_not_a_project_file_stays_unknown(root: Path) -> None:
    (root / "torch").mkdir()
    (root / "torch" / "__init__.py").write_text("x = 1\n")
    (root / "broken.py").write_text("def (:\n")
    importer = index_of(root).importer_for(root / "main.py")
    assert importer.module("numpy", 0) is None
    assert importer.module("broken", 0) is None
    assert importer.module("main", 0) is None  # a file never imports itself


def test_an_edit_on_disk_or_in_an_editor_buffer_is_seen(root: Path) -> None:
    config = root / "config.py"
    config.write_text("import torch\ndevice = torch.device('cuda')\n")
    index = index_of(root)
    importer = index.importer_for(root / "main.py")
    assert importer.module("config", 0).env.get("device").kind is Kind.DEVICE
    config.write_text("device = None  # configured later\n")
    os.utime(config, ns=(1, 1))  # a different stamp whatever the clock's resolution
    index.refresh()  # as the LSP does before each lint (a `devlint check` run never looks again)
    assert importer.module("config", 0).env.get("device").kind is Kind.NONE
    index.set_text(config, "import torch\ndevice = torch.device('cpu')\n")
    assert importer.module("config", 0).env.get("device").kind is Kind.DEVICE
    index.set_text(config, None)
    assert importer.module("config", 0).env.get("device").kind is Kind.NONE


def test_a_change_to_what_a_module_imports_is_seen_through_it(root: Path) -> None:
    (root / "base.py").write_text("import torch\ndevice = torch.device('cuda')\n")
    (root / "config.py").write_text("from base import device\n")
    index = index_of(root)
    importer = index.importer_for(root / "main.py")
    assert importer.module("config", 0).member("device").kind is Kind.DEVICE
    index.set_text(root / "base.py", "device = None\n")
    assert importer.module("config", 0).member("device").kind is Kind.NONE
    used = {path.name for path, _ in importer.uses()}
    assert used == {"config.py", "base.py"}


PACKAGE_INIT = (
    "from .models import Net\n"
    "from .data import Loader\n"
    "try:\n"
    "    from .extras import Extra\n"
    "except ImportError:\n"
    "    Extra = None\n"
)


@pytest.fixture
def package(root: Path) -> Path:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text(PACKAGE_INIT)
    (root / "pkg" / "models.py").write_text(
        "import torch\n\nclass Net(torch.nn.Module):\n    pass\n"
    )
    (root / "pkg" / "data.py").write_text("raise SystemExit\n")
    (root / "pkg" / "extras.py").write_text("Extra = 1\n")
    return root


def test_a_package_runs_only_the_submodules_it_uses_itself_or_an_importer_reads(
    package: Path, parsed: list[str]
) -> None:
    """``from .models import Net`` in an ``__init__`` that never uses ``Net`` waits until an
    importer reads ``Net``; ``Extra``, bound twice there, is imported when the ``__init__``
    runs; ``data.py`` is never run."""
    importer = index_of(package).importer_for(package / "train.py")
    scope = importer.module("pkg", 0)
    assert parsed == [PACKAGE_INIT, "Extra = 1\n"]
    assert scope.member("Net").kind is Kind.CLASS
    assert len(parsed) == 3
    assert {path.name for path, _ in importer.uses()} == {"__init__.py", "extras.py", "models.py"}


def test_names_two_modules_hand_each_other_stay_unbound(root: Path) -> None:
    (root / "a.py").write_text("from b import X\n")
    (root / "b.py").write_text("from a import X\n")
    scope = index_of(root).importer_for(root / "main.py").module("a", 0)
    assert scope.member("X").kind is Kind.UNKNOWN


HELPER = "import torch\n\n\ndef recenter(poses):\n    return poses - torch.ones(3)\n"
CALLER = (
    "import numpy as np\nimport torch\nfrom helper import recenter\n\n\n"
    "def load(count):\n    return recenter(torch.from_numpy(np.zeros((count, 3))))\n"
)


def _given(index: ProjectIndex, root: Path) -> list[list[tuple[str, object]]] | None:
    """What ``calls_into`` says the project's calls give ``recenter`` (line 4 of helper.py):
    each call's parameters with the device of what they are given."""
    found = index.importer_for(root / "helper.py").calls_into("recenter", 4)
    if found is None:
        return None
    return [[(name, value.device.describe()) for name, value in given] for given in found]


def test_the_calls_of_other_files_say_what_they_give_a_function(root: Path) -> None:
    (root / "helper.py").write_text(HELPER)
    (root / "load.py").write_text(CALLER)
    (root / "unrelated.py").write_text("def recenter(x):\n    return x\n\n\nrecenter(1)\n")
    assert _given(index_of(root), root) == [[("poses", "cpu")]]


def test_a_function_too_many_files_mention_has_callers_unknown(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "helper.py").write_text(HELPER)
    (root / "load.py").write_text(CALLER)
    monkeypatch.setattr(project_index, "MAX_CALLER_FILES", 0)
    assert _given(index_of(root), root) is None


def test_a_files_calls_are_analysed_again_only_when_it_or_what_it_imports_changes(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor asks at every lint: a caller's analysis is kept while neither the caller nor
    a module it imports changed; what its own lint saw needs no analysis at all."""
    (root / "helper.py").write_text(HELPER)
    (root / "load.py").write_text(CALLER)
    index = index_of(root)
    caller = index.importer_for(root / "load.py")
    caller.linted(analyse(caller.parse(CALLER), Settings(), caller))
    analysed: list[str] = []
    monkeypatch.setattr(
        project_index,
        "analyse",
        lambda module, *args: analysed.append(module.code) or analyse(module, *args),
    )
    assert _given(index, root) == [[("poses", "cpu")]]
    index.refresh()
    assert _given(index, root) == [[("poses", "cpu")]]
    assert analysed == []  # what the lint saw, still current
    edited = CALLER.replace("np.zeros((count, 3))", "np.zeros(count)")
    (root / "load.py").write_text(edited)
    index.refresh()
    assert _given(index, root) == [[("poses", "cpu")]]
    assert analysed == [edited]
    (root / "helper.py").write_text(HELPER + "\n\nSCALE = 2\n")
    index.refresh()
    assert _given(index, root) == [[("poses", "cpu")]]
    assert analysed == [edited, edited]


def test_a_test_modules_calls_say_nothing_of_the_device_a_function_is_meant_for(
    root: Path,
) -> None:
    """A CPU-only CI machine runs the suite: what a test gives a library's function is no
    sign that the function is CPU code."""
    (root / "helper.py").write_text(HELPER)
    (root / "test_helper.py").write_text(CALLER)
    assert _given(index_of(root), root) == []
    (root / "load.py").write_text(CALLER)
    assert _given(index_of(root), root) == [[("poses", "cpu")]]


def test_a_caller_that_cannot_be_parsed_is_read_again_once_it_changes(root: Path) -> None:
    """Mid-edit, a caller may not parse: its calls are unknown until the file changes."""
    (root / "helper.py").write_text(HELPER)
    (root / "load.py").write_text(CALLER + "def broken(:\n")
    index = index_of(root)
    assert _given(index, root) is None
    (root / "load.py").write_text(CALLER)
    index.refresh()
    assert _given(index, root) == [[("poses", "cpu")]]


WRITER = "import torch\n\n\ndef save(model, path):\n    torch.save(model.state_dict(), path)\n"


def _writers(index: ProjectIndex, root: Path) -> list[str] | None:
    """The files ``checkpoint_writers`` analysed for ``demo.py``, by name."""
    found = index.importer_for(root / "demo.py").checkpoint_writers()
    return None if found is None else sorted(writer.name for writer in found)


def test_the_files_that_may_write_checkpoints_are_those_naming_torch_and_save(
    root: Path,
) -> None:
    """A test writes files for itself, and the loading file is no writer of its own."""
    (root / "demo.py").write_text(WRITER)
    (root / "train.py").write_text(WRITER)
    (root / "test_train.py").write_text(WRITER)
    (root / "plots.py").write_text("import matplotlib\n\n\ndef save(figure):\n    figure.save()\n")
    reader = "import torch\n\n\ndef read(path):\n    return torch.load(path)\n"
    (root / "data.py").write_text(reader)
    assert _writers(index_of(root), root) == ["train.py"]


def test_checkpoint_writers_are_unknown_past_a_number_of_files(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "demo.py").write_text("")
    (root / "train.py").write_text(WRITER)
    (root / "export.py").write_text(WRITER)
    monkeypatch.setattr(project_index, "MAX_WRITER_FILES", 1)
    assert _writers(index_of(root), root) is None
    monkeypatch.setattr(project_index, "MAX_WRITER_FILES", 2)
    assert _writers(index_of(root), root) == ["export.py", "train.py"]


def test_a_writer_is_analysed_again_only_when_it_changes(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "demo.py").write_text("")
    (root / "train.py").write_text(WRITER)
    index = index_of(root)
    analysed: list[str] = []
    monkeypatch.setattr(
        project_index,
        "analyse",
        lambda module, *args: analysed.append(module.code) or analyse(module, *args),
    )
    assert _writers(index, root) == ["train.py"]
    index.refresh()
    assert _writers(index, root) == ["train.py"]
    assert analysed == [WRITER]
    (root / "train.py").write_text(WRITER + "\n\nEPOCHS = 2\n")
    index.refresh()
    assert _writers(index, root) == ["train.py"]
    assert analysed == [WRITER, WRITER + "\n\nEPOCHS = 2\n"]


def test_a_writer_linted_first_or_last_is_analysed_once_in_a_run(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run lints every file: a writer's own lint and another file's question of its
    checkpoints share one analysis, whichever comes first (and one parse)."""
    for name in ("early.py", "late.py"):
        (root / name).write_text(WRITER)
    (root / "demo.py").write_text("")
    index = index_of(root)
    analysed: list[str] = []

    def counted(tree: cst.Module, *args: object):
        analysed.append(tree.code)
        return analyse(tree, *args)

    monkeypatch.setattr(project_index, "analyse", counted)
    monkeypatch.setattr(engine, "analyse", counted)
    monkeypatch.setattr(engine, "project_importer", lambda path, *args: index.importer_for(path))
    engine.lint_file_in_project(root / "early.py")
    assert _writers(index, root) == ["early.py", "late.py"]
    engine.lint_file_in_project(root / "late.py")
    assert analysed == [WRITER, WRITER]  # early.py by its lint, late.py for demo.py's question
    late = index.importer_for(root / "demo.py").checkpoint_writers()[1]
    assert late.facts.module is index.importer_for(root / "late.py").parse(WRITER)
