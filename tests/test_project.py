"""Project resolution: the root a file belongs to and the project file each import names,
on real folders (``tmp_path``); what is outside the project stays unresolved."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from devlint.project import finder
from devlint.project.finder import Project, project_root


def _tree(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")


@pytest.mark.parametrize("marker", ["pyproject.toml", "setup.cfg", "setup.py", ".git"])
def test_the_root_is_the_nearest_folder_with_a_marker(tmp_path, marker):
    _tree(tmp_path, [marker, "pkg/sub/train.py"])
    assert project_root(tmp_path / "pkg" / "sub" / "train.py") == tmp_path


def test_the_nearest_marker_wins(tmp_path):
    _tree(tmp_path, ["pyproject.toml", "tools/inner/setup.py", "tools/inner/run.py"])
    assert project_root(tmp_path / "tools" / "inner" / "run.py") == tmp_path / "tools" / "inner"


def test_without_a_marker_the_scripts_folder_is_the_root(tmp_path, monkeypatch):
    # markers nobody has, so that a repository around the temporary folder cannot count
    monkeypatch.setattr(finder, "ROOT_MARKERS", ("no-such-marker.toml",))
    _tree(tmp_path, ["scripts/train.py"])
    assert project_root(tmp_path / "scripts" / "train.py") == tmp_path / "scripts"


def test_a_sibling_module_of_a_script(tmp_path):
    _tree(tmp_path, ["pyproject.toml", "scripts/train.py", "scripts/utils.py"])
    found = Project(tmp_path).module_file(tmp_path / "scripts" / "train.py", "utils")
    assert found == tmp_path / "scripts" / "utils.py"


def test_absolute_imports_of_the_projects_packages(tmp_path):
    _tree(tmp_path, ["setup.py", "pkg/__init__.py", "pkg/models/__init__.py", "pkg/models/net.py"])
    found = Project(tmp_path)
    importer = tmp_path / "train.py"
    assert found.module_file(importer, "pkg.models.net") == tmp_path / "pkg/models/net.py"
    assert found.module_file(importer, "pkg") == tmp_path / "pkg/__init__.py"
    assert found.module_file(importer, "pkg.models") == tmp_path / "pkg/models/__init__.py"


def test_a_package_comes_before_a_module_of_the_same_name(tmp_path):
    _tree(tmp_path, ["setup.py", "model.py", "model/__init__.py"])
    found = Project(tmp_path).module_file(tmp_path / "train.py", "model")
    assert found == tmp_path / "model" / "__init__.py"


def test_a_namespace_package_on_the_way(tmp_path):
    _tree(tmp_path, ["setup.py", "ns/mod.py"])
    assert Project(tmp_path).module_file(tmp_path / "run.py", "ns.mod") == tmp_path / "ns/mod.py"


def test_a_src_layout(tmp_path):
    _tree(tmp_path, ["pyproject.toml", "src/mypkg/__init__.py", "src/mypkg/a.py", "tests/t.py"])
    found = Project(tmp_path).module_file(tmp_path / "tests" / "t.py", "mypkg.a")
    assert found == tmp_path / "src/mypkg/a.py"


def test_relative_imports(tmp_path):
    files = ["setup.py", "pkg/__init__.py", "pkg/model.py", "pkg/utils.py", "pkg/sub/__init__.py"]
    _tree(tmp_path, [*files, "pkg/sub/x.py", "pkg/train.py"])
    resolve = Project(tmp_path)
    assert resolve.module_file(tmp_path / "pkg/train.py", "model", 1) == tmp_path / "pkg/model.py"
    assert resolve.module_file(tmp_path / "pkg/sub/x.py", "utils", 2) == tmp_path / "pkg/utils.py"
    package = resolve.module_file(tmp_path / "pkg/train.py", "", 1)
    assert package == tmp_path / "pkg/__init__.py"
    assert resolve.submodule_file(package, "model") == tmp_path / "pkg/model.py"
    assert resolve.submodule_file(package, "missing") is None


def test_a_relative_import_from_a_packages_init(tmp_path):
    _tree(tmp_path, ["setup.py", "pkg/__init__.py", "pkg/layers.py"])
    found = Project(tmp_path).module_file(tmp_path / "pkg/__init__.py", "layers", 1)
    assert found == tmp_path / "pkg/layers.py"


@pytest.mark.parametrize("name", ["torch", "os", "numpy.linalg", "pkg.missing", "a..b", ""])
def test_what_the_project_does_not_hold_stays_unresolved(tmp_path, name):
    _tree(tmp_path, ["setup.py", "pkg/__init__.py"])
    assert Project(tmp_path).module_file(tmp_path / "train.py", name) is None


def test_a_relative_import_above_the_root_stays_unresolved(tmp_path):
    project_folder = tmp_path / "project"
    _tree(tmp_path, ["outside.py", "project/setup.py", "project/train.py"])
    assert Project(project_folder).module_file(project_folder / "train.py", "outside", 2) is None


def test_a_link_out_of_the_project_stays_unresolved(tmp_path):
    project_folder = tmp_path / "project"
    _tree(tmp_path, ["elsewhere/secret.py", "project/setup.py", "project/train.py"])
    os.symlink(tmp_path / "elsewhere" / "secret.py", project_folder / "linked.py")
    assert Project(project_folder).module_file(project_folder / "train.py", "linked") is None


def test_a_folder_named_like_a_module_is_not_one(tmp_path):
    _tree(tmp_path, ["setup.py", "data/readme.txt"])
    assert Project(tmp_path).module_file(tmp_path / "train.py", "data") is None
