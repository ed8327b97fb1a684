"""Multi-file fixture projects: `devlint check <project>` reports exactly their markers.

Each `fixtures/projects/<name>/` is a small project whose `# expect:` markers may sit in any
file. Linted alone, each file reports exactly its `# alone-expect:` markers: mostly none,
since the other files are what shows the bug; where the other files show that code is
correct (every caller hands a helper CPU data), what the file alone reports. Either way these
tests fail if cross-file analysis stops working.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from expectations import parse_expectations

from devlint.config import DEFAULT_SETTINGS
from devlint.running.engine import lint_file, lint_source

ROOT = Path(__file__).resolve().parent.parent
PROJECTS = sorted(path for path in (ROOT / "fixtures" / "projects").iterdir() if path.is_dir())


def _markers(project: Path) -> set[tuple[str, int, str]]:
    return {
        (path.relative_to(ROOT).as_posix(), expectation.line, expectation.code)
        for path in sorted(project.rglob("*.py"))
        for expectation in parse_expectations(path.read_text(encoding="utf-8"))
        if not expectation.alone
    }


def _alone_markers(path: Path) -> set[tuple[int, str]]:
    return {
        (expectation.line, expectation.code)
        for expectation in parse_expectations(path.read_text(encoding="utf-8"))
        if expectation.alone
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
def test_each_file_alone_reports_exactly_its_alone_markers(project: Path) -> None:
    """Without the rest of the project a file shows what its own code shows: the project's
    markers need the other files, and so does the silence of a file marked ``alone-expect``."""
    for path in sorted(project.rglob("*.py")):
        found = lint_source(path.read_text(encoding="utf-8"), str(path), DEFAULT_SETTINGS)
        assert {(d.line, d.code) for d in found} == _alone_markers(path), path.name


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


def _project(root: Path, files: dict[str, str]) -> Path:
    """A project folder holding ``files`` (name -> text); returns its root."""
    (root / "pyproject.toml").write_text("")
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def _only_finding(root: Path, files: dict[str, str], linted: str) -> tuple[str, int, str]:
    """The one finding of ``linted`` in a project of ``files``: code, line, message."""
    [finding] = lint_file(_project(root, files) / linted)
    return finding.code, finding.line, finding.message


def test_a_helpers_own_cpu_tensor_in_a_collective_is_its_files_finding(tmp_path: Path) -> None:
    """The collective runs in `dist_utils.py` on a count the helper made itself: that file's
    own analysis reports it; the file calling the helper handed it nothing on the CPU."""
    _project(
        tmp_path,
        {
            "dist_utils.py": "import torch\nimport torch.distributed as dist\n\n\n"
            "def world_count():\n    count = torch.tensor(1)\n    dist.all_reduce(count)\n"
            "    return count.item()\n",
            "evaluate.py": "import torch\nfrom dist_utils import world_count\n\n"
            "print(world_count())\n",
        },
    )
    assert lint_file(tmp_path / "evaluate.py") == []
    [finding] = lint_file(tmp_path / "dist_utils.py")
    assert (finding.code, finding.line) == ("DVL408", 7)


CHOSEN_DEVICE = 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'


def test_a_helpers_own_cpu_factory_is_not_reported_where_it_is_called(tmp_path: Path) -> None:
    """The helper in `layers.py` adds a CPU bias to whatever it is given: a bug of that file
    (reported there when it places tensors); the caller handed it nothing on the CPU."""
    _project(
        tmp_path,
        {
            "layers.py": "import torch\n\n\ndef add_bias(x: torch.Tensor) -> torch.Tensor:\n"
            "    return x + torch.ones(4)\n",
            "train.py": "import torch\nfrom layers import add_bias\n\n"
            + CHOSEN_DEVICE
            + "print(add_bias(torch.zeros(2, 4, device=device)))\n",
        },
    )
    assert lint_file(tmp_path / "train.py") == []


def test_a_call_into_another_file_is_reported_once_at_its_first_clash(tmp_path: Path) -> None:
    """llama2.c's `model.generate(x)` with the model left on the CPU: the module call in
    `generate` fails first; the later `torch.cat` of its output is the same bug."""
    files = {
        "sampling.py": "import torch\n\n\ndef generate(model, idx):\n"
        "    logits = model(idx)\n"
        "    return torch.cat((idx, logits.argmax(-1, keepdim=True)), dim=1)\n",
        "sample.py": "import torch\nfrom sampling import generate\nfrom torch import nn\n\n"
        + CHOSEN_DEVICE
        + "model = nn.Linear(4, 4)\n"
        "print(generate(model, torch.zeros(2, 4, device=device)))\n",
    }
    code, line, message = _only_finding(tmp_path, files, "sample.py")
    assert (code, line) == ("DVL102", 7)
    assert message.startswith("`model` is on cpu (created at line 6)")
    assert "they meet at sampling.py:5, in code this call runs" in message


def test_a_method_of_another_files_model_calling_forward_is_the_model_computing(
    tmp_path: Path,
) -> None:
    """pytorch-soft-actor-critic's `policy.sample(state)`: `sample` in `model.py` calls
    `self.forward(state)`, one call deeper than the analysis follows another file's code;
    it is still the policy's layers computing on the caller's cpu state."""
    files = {
        "model.py": "from torch import nn\n\n\nclass Policy(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.linear = nn.Linear(4, 2)\n\n"
        "    def forward(self, state):\n        return self.linear(state)\n\n"
        "    def sample(self, state):\n        mean = self.forward(state)\n"
        "        return mean.tanh()\n",
        "agent.py": "import torch\nfrom model import Policy\n\n"
        + CHOSEN_DEVICE
        + "policy = Policy().to(device)\n"
        "print(policy.sample(torch.zeros(3, 4)))\n",
    }
    code, line, message = _only_finding(tmp_path, files, "agent.py")
    assert (code, line) == ("DVL102", 6)
    assert "they meet at model.py:13, in code this call runs" in message


def test_a_folder_the_script_puts_on_sys_path_is_searched(tmp_path: Path) -> None:
    """RAFT's `evaluate.py` does `sys.path.append('core')` and then `from raft import RAFT`:
    the model class is the project's `core/raft.py`, a module created on the CPU."""
    (tmp_path / "core").mkdir()
    files = {
        "core/raft.py": "from torch import nn\n\n\nclass RAFT(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.fnet = nn.Conv2d(3, 8, 7)\n\n"
        "    def forward(self, image):\n        return self.fnet(image)\n",
        "evaluate.py": "import sys\nsys.path.append('core')\n\nimport torch\n"
        "from raft import RAFT\n\nmodel = RAFT()\n"
        "print(model(torch.zeros(1, 3, 8, 8).cuda()))\n",
    }
    code, line, message = _only_finding(tmp_path, files, "evaluate.py")
    assert (code, line) == ("DVL102", 8)
    assert message.startswith("`model` is on cpu (created at line 7)")


WRAPPED_SAVE = (
    "import os\n\nimport torch\nfrom torch import nn\nfrom model import Net\n\n"
    'local_rank = int(os.environ["LOCAL_RANK"])\n'
    "model = nn.parallel.DistributedDataParallel(Net().to(local_rank), device_ids=[local_rank])\n"
    'torch.save({"model_state_dict": model.state_dict()}, "model.pt")\n'
)
NET = (
    "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n"
    "    def load_weight(self, state_dict):\n"
    "        state_dict = {{key[len({prefix!r}):] if key.startswith({prefix!r}) else key: value\n"
    "                      for key, value in state_dict.items()}}\n"
    "        self.load_state_dict(state_dict)\n"
)


@pytest.mark.parametrize(
    ("prefix", "reported"), [("module.", False), ("module.fc.", False), ("model.", True)]
)
def test_a_wrapped_checkpoint_the_models_own_loader_unprefixes_is_what_it_wants(
    tmp_path: Path, prefix: str, reported: bool
) -> None:
    """LoRA's gpt2_ft.py saves the DDP wrapper's state_dict(); the model's own `load_weight`
    in model.py strips `module.`: the prefixed keys are what the project reads back."""
    _project(tmp_path, {"model.py": NET.format(prefix=prefix), "train.py": WRAPPED_SAVE})
    assert [d.code for d in lint_file(tmp_path / "train.py")] == (["DVL402"] if reported else [])
