"""What the file cannot see is unknown, never cpu: classes, modules and helpers from elsewhere.

Each case is a small version of a false positive or a miss found on real code
(benchmarks/realworld/ledger.jsonl, mined/bugs.json).
"""

import textwrap

import pytest
from test_analysis import PRELUDE, revealed

from devlint.config import Settings
from devlint.core.lattice import CPU, MODULE_DEVICE, UNKNOWN, Symbol
from devlint.running.engine import lint_source


def codes(source: str) -> list[tuple[int, str]]:
    """(line, code) of every default-rule finding in ``source``."""
    found = lint_source(textwrap.dedent(source), "model.py", Settings(), fixes=False)
    return sorted((d.line, d.code) for d in found)


IMPORTED_BASE = """\
import torch
import torch.nn.functional as F
from torch import nn
from lavis.models.blip import BlipBase


class BlipRetrieval(BlipBase):
    def __init__(self):
        super().__init__()
        self.itm_head = nn.Linear(8, 2)

    def forward(self, samples):
        image = samples["image"]
        logits = self.itm_head(samples["embeds"])
        labels = torch.zeros(4, dtype=torch.long).to(image.device)
        return F.cross_entropy(logits, labels)
"""


def test_submodule_of_a_class_with_an_imported_module_base_is_not_cpu():
    # LAVIS: BlipBase (another file) is an nn.Module, so itm_head moves with the model.
    assert codes(IMPORTED_BASE) == []


CLASS_CASES = {
    "imported base with forward: submodules are on the module's device": (
        "from elsewhere import Base\nclass N(Base):\n    def __init__(self):\n"
        "        self.fc = nn.Linear(1, 1)\n    def forward(self, x):\n        reveal(self.fc)\n",
        MODULE_DEVICE,
    ),
    "imported base registering a buffer: the buffer is on the module's device": (
        "from elsewhere import Base\nclass N(Base):\n    def __init__(self):\n"
        "        self.register_buffer('f', torch.zeros(3))\n    def mel(self, a):\n"
        "        reveal(self.f)\n",
        MODULE_DEVICE,
    ),
    "imported base, no sign of a module: its submodules may be moved by its .to()": (
        "from elsewhere import Base\nclass N(Base):\n    def __init__(self):\n"
        "        self.fc = nn.Linear(1, 1)\n    def run(self, x):\n        reveal(self.fc)\n",
        UNKNOWN,
    ),
    "a relatively imported base is outside the file too": (
        "from .base import Base\nclass N(Base):\n    def __init__(self):\n"
        "        self.fc = nn.Linear(1, 1)\n    def run(self, x):\n        reveal(self.fc)\n",
        UNKNOWN,
    ),
    "object is not a module: a plain class keeps its cpu submodule": (
        "class T(object):\n    def __init__(self):\n        self.fc = nn.Linear(1, 1)\n"
        "    def run(self, x):\n        reveal(self.fc)\n",
        CPU,
    ),
    "a standard-library base is not a module": (
        "import abc\nclass T(abc.ABC):\n    def __init__(self):\n"
        "        self.fc = nn.Linear(1, 1)\n    def run(self, x):\n        reveal(self.fc)\n",
        CPU,
    ),
    "a plain tensor on a module with an imported base stays on the cpu": (
        "from elsewhere import Base\nclass N(Base):\n    def __init__(self):\n"
        "        self.t = torch.zeros(3)\n    def forward(self, x):\n        reveal(self.t)\n",
        CPU,
    ),
    "a non-module mixin's submodules are registered on the nn.Module that mixes it in": (
        "from elsewhere import TunerLayer\nclass Layer(TunerLayer):\n"
        "    def __init__(self, base):\n        self.adapters = nn.ModuleDict({})\n"
        "class Linear(nn.Module, Layer):\n    def __init__(self, base):\n"
        "        super().__init__()\n        Layer.__init__(self, base)\n"
        "    def forward(self, x):\n        reveal(self.adapters)\n",
        MODULE_DEVICE,
    ),
    "a tensor assigned to a registered buffer's name stays a buffer": (
        "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('q', torch.randn(4, 8))\n"
        "        self.q = nn.functional.normalize(self.q, dim=0)\n"
        "    def forward(self, x):\n        reveal(self.q)\n",
        MODULE_DEVICE,
    ),
    "a layer's weight is a parameter": (
        "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        conv = nn.Conv2d(1, 1, 1)\n        self.k = conv.weight\n"
        "    def forward(self, x):\n        reveal(self.k)\n",
        MODULE_DEVICE,
    ),
    "parameter on one path, buffer on the other: registered either way": (
        "class N(nn.Module):\n    def __init__(self, learn):\n        super().__init__()\n"
        "        if learn:\n            self.s = nn.Parameter(torch.ones(1))\n        else:\n"
        "            self.register_buffer('s', torch.ones(1))\n"
        "    def forward(self, x):\n        reveal(self.s)\n",
        MODULE_DEVICE,
    ),
    "a layer built with device= is on that device": (
        "def f(device):\n    reveal(nn.Linear(2, 2, device=device))",
        Symbol("device"),
    ),
}


@pytest.mark.parametrize("name", CLASS_CASES)
def test_class_attributes(name):
    body, expected = CLASS_CASES[name]
    assert revealed(PRELUDE + body) == expected


def test_a_layer_built_with_device_meets_inputs_on_that_device():
    # speechbrain test_checkpoints.py: nn.Linear(10, 10, device=device) called on a device input.
    source = """\
    import torch

    def check(device):
        inp = torch.randn((3, 10), device=device)
        module = torch.nn.Linear(10, 10, device=device)
        return module(inp)
    """
    assert codes(source) == []


DDP_SETUP = """\
import torch
from torch import nn
import utils

def main(args):
    utils.init_distributed_mode(args)
    model = nn.Linear(2, 2)
    model = model.cuda()
    model = nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    return model
"""


def test_an_imported_distributed_setup_helper_may_set_the_device():
    # dino eval_linear.py: utils.init_distributed_mode calls torch.cuda.set_device(args.gpu).
    assert codes(DDP_SETUP) == []
    without_helper = DDP_SETUP.replace("    utils.init_distributed_mode(args)\n", "")
    assert codes(without_helper) == [(8, "DVL406")]


IMPORTED_MODEL = """\
import torch
from mymodels import Net

device = torch.device("cuda")
model = Net().to(device)
model.eval()
x = torch.randn(3, 4)
out = model(x, torch.zeros(3))
"""


def test_usage_proves_an_imported_class_is_a_module():
    # `model.eval()` only a module has: the cpu input of a model moved to cuda fails.
    # Only the first input of a model we cannot see is surely data (BasicSR dfdnet passes
    # cpu part locations used as slice bounds): torch.zeros(3) is not reported.
    assert codes(IMPORTED_MODEL) == [(8, "DVL102")]
    assert codes(IMPORTED_MODEL.replace("model.eval()\n", "")) == []


CONDITIONAL_WRAP = """\
import torch
from torch import nn
from mymodels import build


def main(n_gpus):
    model = build()
    if n_gpus > 1:
        model = nn.DataParallel(model)
    model.cuda()
    print(model.num_classes)
"""


def test_a_model_from_elsewhere_wrapped_on_some_paths_is_a_maybe_wrapper():
    # coqui TTS: `if num_gpus > 1: model = DDP(model)` around a model built by an imported helper.
    assert codes(CONDITIONAL_WRAP) == [(11, "DVL401")]


def test_an_own_attribute_checked_with_hasattr_is_not_read_through_the_wrapper():
    # coqui TTS trainer: `elif hasattr(self.model, "eval_log"): self.model.eval_log(...)`.
    source = """\
    import torch
    from torch import nn

    model = nn.DataParallel(nn.Linear(2, 2))
    if hasattr(model, "num_classes"):
        print(model.num_classes)
    print(model.num_classes)
    """
    assert codes(source) == [(7, "DVL401")]


def test_a_device_read_from_a_string_is_unknown_not_no_device():
    # peft corda: `.to(get_model_device(linear))` returns `next(model.parameters()).device.type`.
    source = """\
    import torch
    from torch import nn

    class N(nn.Module):
        def forward(self, x):
            return torch.eye(3).to(x.device.type) + x
    """
    assert codes(source) == []


def test_a_module_dict_member_is_called_where_the_dict_is():
    # nanoGPT-style `self.transformer = nn.ModuleDict(dict(wpe=...))`; `self.transformer.wpe(pos)`.
    source = """\
    import torch
    from torch import nn

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(wpe=nn.Embedding(10, 4), drop=nn.Dropout(0.1)))

        def forward(self, idx):
            pos = torch.arange(0, idx.size(1), dtype=torch.long)
            return self.transformer.drop(self.transformer.wpe(pos))
    """
    assert codes(source) == [(11, "DVL103")]
    moved = source.replace("dtype=torch.long)", "dtype=torch.long, device=idx.device)")
    assert codes(moved) == []


def test_a_model_with_an_offload_hook_is_anywhere():
    # accelerate.cpu_offload / pipe.enable_model_cpu_offload: weights move at each call.
    source = """\
    import torch
    from torch import nn
    from accelerate import cpu_offload

    model = nn.Linear(4, 4)
    cpu_offload(model, execution_device=torch.device("cuda"))
    y = model(torch.randn(2, 4, device="cuda"))
    """
    assert codes(source) == []
    assert codes(
        source.replace('    cpu_offload(model, execution_device=torch.device("cuda"))\n', "")
    ) == [(6, "DVL102")]


TOY_TEST_MODEL = """\
import torch
from torch import nn


class Toy(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(10, 10)])

    def forward(self):
        return self.layers[0](torch.rand(1, 10))


def test_toy_runs():
    assert Toy()().shape == (1, 10)
"""


@pytest.mark.parametrize(
    ("path", "added", "expected"),
    [
        ("tests/test_toy.py", "", []),
        ("tests/toy_test.py", "", []),
        ("toy.py", "", [(11, "DVL103")]),  # a library's model: its users may place it
        ("tests/test_toy.py", "\n\ndef test_on_gpu():\n    Toy().cuda()()\n", [(11, "DVL103")]),
        ("tests/test_toy.py", '\nDEVICES = ["cpu", f"cuda:{0}"]\n', [(11, "DVL103")]),
    ],
)
def test_a_test_modules_own_models_run_where_its_code_puts_them(path, added, expected):
    """peft's tests/test_other.py: toy models build their own input with `torch.rand` in
    `forward`. Nothing imports a pytest module, so when its code names no device at all
    its models stay on the CPU, and the module's device is never a GPU."""
    found = lint_source(TOY_TEST_MODEL + added, path, Settings(), fixes=False)
    assert sorted((d.line, d.code) for d in found) == expected
