"""A run with unknown arguments assumes a caller; code nothing in the project calls has none.

A model's ``test()`` self-check that forwards a CPU sample through the fresh model is CPU
code: its receiver is "a module someone placed on a GPU" only if someone calls it. These
tests lint small projects in a temporary folder, as ``devlint check`` does (the file in
view of its project), and compare with the same file linted alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from devlint.config import DEFAULT_SETTINGS
from devlint.project.mentions import ProjectMentions
from devlint.running.engine import lint_file_in_project, lint_source

NET = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv3d(1, 4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)

    def self_check(self) -> None:
        sample = torch.rand(1, 1, 8, 8, 8)
        print(self.conv(sample).shape)

    def smoke(self) -> None:
        sample = torch.rand(1, 1, 8, 8, 8)
        print(self.conv(sample).shape)

    def self_check_on(self, device: str = "cpu") -> None:
        model = self.to(device)
        sample = torch.rand(1, 1, 8, 8, 8)
        print(model.conv(sample).shape)

    def moved_after_the_check(self, device: str = "cpu") -> None:
        sample = torch.rand(1, 1, 8, 8, 8)
        print(self.conv(sample).shape)
        self.to(device)
"""
CALLERS = """\
from models.net import Net

# Net().self_check()   (a call in a comment is no call)
MODES = ["self_check", "moved_after_the_check"]  # nor is a name in a string


def test_smoke() -> None:
    Net().smoke()
"""


def _project(tmp_path: Path, **files: str) -> Path:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def _lines(diagnostics) -> list[tuple[int, str]]:
    return sorted((d.line, d.code) for d in diagnostics)


def test_a_self_check_nothing_calls_is_silent_where_a_called_one_is_reported(tmp_path):
    root = _project(tmp_path, **{"models/net.py": NET, "tests/test_models.py": CALLERS})
    diagnostics, _ = lint_file_in_project(root / "models/net.py", DEFAULT_SETTINGS)
    # smoke (a test calls it) and self_check_on (it moves the model first) are reported;
    # self_check and moved_after_the_check (the move comes after the forward) are not
    assert _lines(diagnostics) == [(19, "DVL103"), (24, "DVL103")]


def test_alone_every_method_is_taken_as_called(tmp_path):
    """Without the project nothing shows that a method is never called: as before."""
    reported = lint_source(NET, "net.py", DEFAULT_SETTINGS)
    assert _lines(reported) == [(15, "DVL103"), (19, "DVL103"), (24, "DVL103"), (28, "DVL103")]


def test_a_function_the_module_exports_is_called_from_outside(tmp_path):
    helpers = """\
import torch

__all__ = ["same_ranks"]


def same_ranks(ranks: torch.Tensor = torch.zeros(3)) -> bool:
    return ranks.equal(torch.arange(ranks.shape[0]))


def same_order(ranks: torch.Tensor = torch.zeros(3)) -> bool:
    return ranks.equal(torch.arange(ranks.shape[0]))


def placed(x: torch.Tensor, device: torch.device) -> torch.Tensor:
    return x.to(device)
"""
    root = _project(tmp_path, **{"pkg/helpers.py": helpers})
    diagnostics, _ = lint_file_in_project(root / "pkg/helpers.py", DEFAULT_SETTINGS)
    assert _lines(diagnostics) == [(7, "DVL103")]  # not same_order: nothing names it


def test_an_entry_point_that_takes_the_users_data_is_called_from_outside(tmp_path):
    """A library model's ``predict(images)`` is called by its users, with a placed model."""
    predict = NET.replace(
        "def self_check(self) -> None:", "def self_check(self, size: int) -> None:"
    )
    root = _project(tmp_path, **{"models/net.py": predict, "tests/test_models.py": CALLERS})
    diagnostics, _ = lint_file_in_project(root / "models/net.py", DEFAULT_SETTINGS)
    assert _lines(diagnostics) == [(15, "DVL103"), (19, "DVL103"), (24, "DVL103")]


def test_a_method_a_framework_base_may_call_is_taken_as_called(tmp_path):
    trainer = NET.replace("class Net(nn.Module):", "class Net(nn.Module, Trainable):")
    trainer = trainer.replace("import torch\n", "import torch\nfrom lib import Trainable\n")
    root = _project(tmp_path, **{"models/net.py": trainer})
    diagnostics, _ = lint_file_in_project(root / "models/net.py", DEFAULT_SETTINGS)
    assert _lines(diagnostics) == [(16, "DVL103"), (20, "DVL103"), (25, "DVL103"), (29, "DVL103")]


def test_a_result_that_rests_on_the_project_names_every_file(tmp_path):
    """A cached result is reused only while no file of the project changed: any of them may
    start calling the method."""
    root = _project(tmp_path, **{"models/net.py": NET, "tests/test_models.py": CALLERS})
    _, uses = lint_file_in_project(root / "models/net.py", DEFAULT_SETTINGS)
    assert root / "tests/test_models.py" in {path for path, _ in uses}


@pytest.mark.parametrize(
    ("text", "mentioned"),
    [
        ("def name(): pass\n", False),
        ("async def name(): pass\n", False),
        ("x = 1  # name()\n", False),
        ("x = 'name'\ny = \"name\"\n", False),
        ('"""\nname()\n"""\n', False),
        ("obj.name()\n", True),
        ("callback = name\n", True),
        ('f"{x}" + name\n', True),
        ("__all__ = [\n    'name',\n]\n", True),
        ("renamed = 1\nname_2 = 2\n", False),
    ],
)
def test_what_counts_as_a_mention(tmp_path, text, mentioned):
    (tmp_path / "a.py").write_text(text, encoding="utf-8")
    assert ProjectMentions(tmp_path).mentioned("name") is mentioned


def test_a_project_too_large_to_scan_mentions_everything_unknown(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text("x = 1\n" * 100, encoding="utf-8")
    monkeypatch.setattr("devlint.project.mentions.MAX_BYTES", 100)
    assert ProjectMentions(tmp_path).mentioned("name") is None


def test_folders_of_environments_and_hidden_folders_are_not_the_project(tmp_path):
    for folder in (".venv/lib", "env/lib/site-packages/pkg", "venv2"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "venv2" / "pyvenv.cfg").write_text("", encoding="utf-8")
    for folder in (".venv/lib", "env/lib/site-packages/pkg", "venv2"):
        (tmp_path / folder / "m.py").write_text("name()\n", encoding="utf-8")
    assert ProjectMentions(tmp_path).mentioned("name") is False


def test_a_rescan_reads_what_changed_and_drops_what_went(tmp_path):
    (tmp_path / "a.py").write_text("name()\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("other()\n", encoding="utf-8")
    mentions = ProjectMentions(tmp_path)
    assert mentions.mentioned("name") is True
    (tmp_path / "a.py").write_text("renamed()\n", encoding="utf-8")
    assert mentions.mentioned("name") is True  # until told to look again
    mentions.forget()
    assert (mentions.mentioned("name"), mentions.mentioned("renamed")) == (False, True)
    (tmp_path / "b.py").unlink()
    mentions.forget()
    assert mentions.mentioned("other") is False
    assert [path.name for path, _ in mentions.files()] == ["a.py"]
