"""Multi-file fixture projects: `devlint check <project>` reports exactly their markers.

Each `fixtures/projects/<name>/` is a small project whose `# expect:` markers may sit in any
file. The buggy ones are silent when each file is linted alone: the other files are what
shows the bug, so these tests fail if cross-file analysis stops working.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from expectations import parse_expectations

from devlint.config import DEFAULT_SETTINGS
from devlint.engine import lint_file, lint_source

ROOT = Path(__file__).resolve().parent.parent
PROJECTS = sorted(path for path in (ROOT / "fixtures" / "projects").iterdir() if path.is_dir())


def _markers(project: Path) -> set[tuple[str, int, str]]:
    return {
        (path.relative_to(ROOT).as_posix(), expectation.line, expectation.code)
        for path in sorted(project.rglob("*.py"))
        for expectation in parse_expectations(path.read_text(encoding="utf-8"))
    }


def _check(project: Path) -> list[dict]:
    """`devlint check` on the project folder, as a user runs it (JSON output)."""
    command = ["check", "--no-cache", "--format", "json", str(project.relative_to(ROOT))]
    completed = subprocess.run(
        [sys.executable, "-m", "devlint", *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode in (0, 1), completed.stderr
    return json.loads(completed.stdout)


@pytest.mark.parametrize("project", PROJECTS, ids=lambda path: path.name)
def test_project_reports_exactly_its_markers(project: Path) -> None:
    reported = {(d["path"], d["line"], d["code"]) for d in _check(project)}
    assert reported == _markers(project)


@pytest.mark.parametrize("project", PROJECTS, ids=lambda path: path.name)
def test_each_file_alone_reports_nothing(project: Path) -> None:
    """Without the rest of the project no file shows a bug: the markers need other files."""
    for path in sorted(project.rglob("*.py")):
        assert lint_source(path.read_text(encoding="utf-8"), str(path), DEFAULT_SETTINGS) == []


def test_the_message_names_the_other_file_and_offers_no_fix_there() -> None:
    project = ROOT / "fixtures" / "projects" / "relative_mask_helper"
    [finding] = _check(project)
    assert (
        "created without `device=` at fixtures/projects/relative_mask_helper/pkg/masks.py:7"
        in finding["message"]
    )
    [diagnostic] = lint_file(project / "pkg" / "attention.py")  # fixes built, as --fix does
    assert diagnostic.code == "DVL103"
    assert diagnostic.fix is None  # the factory to fix is in masks.py, not the file reported


def test_an_inherited_forward_names_the_base_class_file() -> None:
    [finding] = _check(ROOT / "fixtures" / "projects" / "base_class_across_files")
    assert (
        "(an input of the module at fixtures/projects/base_class_across_files/base.py:8)"
        in finding["message"]
    )


def test_another_files_names_mean_nothing_in_the_importing_file(tmp_path: Path) -> None:
    """speechbrain's make_padding_mask(x): the mask is made on the device of the helper's
    `x`; the test's own `x` is not that name, and what it is the test cannot see."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "masks.py").write_text(
        "import torch\n\n\ndef padding_mask(x, device=None):\n"
        "    return torch.arange(x.size(1), device=x.device) < 3\n"
    )
    test = tmp_path / "test_masks.py"
    test.write_text(
        "from masks import padding_mask\n\n\ndef test_mask(sample_data):\n"
        "    x, lengths = sample_data\n    return x.numpy(), padding_mask(x).numpy()\n"
    )
    assert lint_file(test) == []
