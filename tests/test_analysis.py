"""The provenance analysis answers device_of(expr) through every construct it follows.

Each program calls ``reveal(expr)``; the test reads the device the analysis gave
the argument at the last ``reveal`` (``reveal`` is unknown to the analysis, so
it changes nothing).
"""

import textwrap

import libcst as cst
import pytest

from devlint.config import Settings
from devlint.core.analysis import analyse
from devlint.core.lattice import CPU, MAYBE_ACCEL, MODULE_DEVICE, UNKNOWN, Concrete, Symbol

CUDA = Concrete("cuda")


def revealed(source: str, settings: Settings | None = None):
    module = cst.parse_module(textwrap.dedent(source))
    facts = analyse(module, settings or Settings())
    calls = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "reveal":
                calls.append(node)

    module.visit(Finder())
    return facts.device_of(calls[-1].args[0].value)


PRELUDE = "import torch\nfrom torch import nn\n"

CASES = {
    "factory default is cpu": ("x = torch.zeros(3)\nreveal(x)", CPU),
    "factory with device": ("x = torch.zeros(3, device='cuda:1')\nreveal(x)", Concrete("cuda", 1)),
    "torch.device with index": (
        "d = torch.device('cuda', 1)\nreveal(torch.ones(2).to(d))",
        Concrete("cuda", 1),
    ),
    "availability idiom": (
        "d = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "reveal(torch.ones(2).to(d))",
        MAYBE_ACCEL,
    ),
    "guarded module move": (
        "m = nn.Linear(2, 2)\nif torch.cuda.is_available():\n    m.cuda()\nreveal(m)",
        MAYBE_ACCEL,
    ),
    "unguarded branches join to unknown": (
        "x = torch.zeros(2)\nif flag:\n    x = x.cuda()\nreveal(x)",
        UNKNOWN,
    ),
    "device variable symbol": ("reveal(torch.ones(2).to(args.device))", Symbol("args.device")),
    "x.device follows x": (
        "a = torch.ones(2).cuda()\nreveal(torch.zeros(2, device=a.device))",
        CUDA,
    ),
    "to(other tensor)": ("a = torch.ones(2).cuda()\nreveal(torch.zeros(2).to(a))", CUDA),
    "to(dtype) keeps device": ("reveal(torch.zeros(2).cuda().to(torch.float16))", CUDA),
    "cpu()": ("reveal(torch.zeros(2).cuda().cpu())", CPU),
    "tuple unpacking": ("a, (b, c) = torch.zeros(1), (torch.ones(1).cuda(), 3)\nreveal(b)", CUDA),
    "walrus": ("if (y := torch.ones(2).cuda()) is not None:\n    pass\nreveal(y)", CUDA),
    "augmented assignment keeps the target": (
        "t = torch.zeros(2)\nt += torch.ones(2)\nreveal(t)",
        CPU,
    ),
    "for target over a list of moved tensors": (
        "for t in [torch.ones(1).cuda(), torch.zeros(1).cuda()]:\n    reveal(t)",
        CUDA,
    ),
    "loop reaches a fixpoint": (
        "h = torch.zeros(2)\nfor i in range(3):\n    h = h.cuda()\nreveal(h)",
        UNKNOWN,
    ),
    "early return leaves the join": (
        "def f(x):\n    if x is None:\n        return torch.zeros(1)\n    return torch.ones(1)\n"
        "reveal(f(1))",
        CPU,
    ),
    "raise removes a path": (
        "x = torch.zeros(2)\nif bad:\n    x = x.cuda()\n    raise ValueError\nreveal(x)",
        CPU,
    ),
    "continue removes a path from the loop body": (
        "for i in range(3):\n    x = torch.zeros(1).cuda()\n    if i:\n        x = x.cpu()\n"
        "        continue\n    reveal(x)",
        CUDA,
    ),
    "a value three assignments away reaches the loop head on the third pass": (
        # Iteration 3 sees b == the CPU tensor a got in iteration 1: one or two passes say cuda.
        "a = torch.zeros(1).cuda()\nb = torch.zeros(1).cuda()\nc = torch.zeros(1).cuda()\n"
        "for i in range(5):\n    reveal(c)\n    c = b\n    b = a\n    a = torch.zeros(1)",
        UNKNOWN,
    ),
    "a loop that never changes a value keeps its device": (
        "a = torch.zeros(1).cuda()\nb = a\nfor i in range(5):\n    b = a\n    reveal(b)",
        CUDA,
    ),
    "a handler starts from any point of the try body, not its start": (
        "x = torch.zeros(1)\ntry:\n    x = x.cuda()\n    risky()\nexcept RuntimeError:\n"
        "    reveal(x)",
        UNKNOWN,
    ),
    "a handler starts from any point of the try body, not its end": (
        "x = torch.zeros(1).cuda()\ntry:\n    risky()\n    x = torch.zeros(1)\n"
        "except RuntimeError:\n    reveal(x)",
        UNKNOWN,
    ),
    "a handler sees what the whole body agrees on": (
        "x = torch.zeros(1).cuda()\ntry:\n    risky(x)\nexcept RuntimeError:\n    reveal(x)",
        CUDA,
    ),
    "try joins the handler": (
        "try:\n    x = torch.zeros(1).cuda()\nexcept RuntimeError:\n    x = torch.zeros(1)\n"
        "reveal(x)",
        UNKNOWN,
    ),
    "with binds its body": (
        "with torch.no_grad():\n    x = torch.zeros(1).cuda()\nreveal(x)",
        CUDA,
    ),
    "comprehension element": ("xs = [t.cuda() for t in batch]\nreveal(xs[0])", CUDA),
    "local helper return value": (
        "def to_device(batch, device):\n    return [b.to(device) for b in batch]\n"
        "dev = torch.device('cuda:0')\nx, y = to_device(data, dev)\nreveal(y)",
        Concrete("cuda", 0),
    ),
    "attribute across methods": (
        "class T:\n    def __init__(self, m):\n        self.m = m.cuda()\n"
        "    def run(self, x):\n        reveal(self.m)\nT(nn.Linear(1, 1)).run(1)",
        CUDA,
    ),
    "module moves in place": (
        "m = nn.Linear(1, 1)\nm.to('cuda:1')\nreveal(m)",
        Concrete("cuda", 1),
    ),
    "tensor does not move in place": ("x = torch.zeros(1)\nx.to('cuda')\nreveal(x)", CPU),
    "submodule inside forward is on the module's device": (
        "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(1, 1)\n    def forward(self, x):\n        reveal(self.fc)\n",
        MODULE_DEVICE,
    ),
    "user module instance is created on cpu": (
        "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(1, 1)\nreveal(N())",
        CPU,
    ),
    "loader batches are on cpu": (
        "from torch.utils.data import DataLoader\nfor x, y in DataLoader(ds):\n    reveal(y)",
        CPU,
    ),
    "a visible collate_fn that moves nothing keeps batches on cpu": (
        "from torch.utils.data import DataLoader\ndef collate(items):\n    return items\n"
        "for x, y in DataLoader(ds, collate_fn=collate):\n    reveal(y)",
        CPU,
    ),
    "a collate_fn given a device may move the batches": (
        "from functools import partial\nfrom torch.utils.data import DataLoader\n"
        "for x, y in DataLoader(ds, collate_fn=partial(collate, device=device)):\n    reveal(y)",
        UNKNOWN,
    ),
    "a collate_fn made with a device earlier may move the batches": (
        "from functools import partial\nfrom torch.utils.data import DataLoader\n"
        "collate_to = partial(collate, pad=0, device=device)\n"
        "for x, y in DataLoader(ds, collate_fn=collate_to):\n    reveal(y)",
        UNKNOWN,
    ),
    "a collate_fn given no device keeps batches on cpu": (
        "from torch.utils.data import DataLoader\n"
        "for x, y in DataLoader(ds, collate_fn=ds.collate_fn):\n    reveal(y)",
        CPU,
    ),
    "a module created under `with device:` is on a device the analysis does not model": (
        "device = torch.device('cuda')\nwith device:\n    m = nn.Linear(1, 1)\nreveal(m)",
        UNKNOWN,
    ),
    "`with torch.no_grad():` sets no default device": (
        "with torch.no_grad():\n    m = nn.Linear(1, 1)\nreveal(m)",
        CPU,
    ),
    "parameter named device": (
        "def f(device):\n    reveal(torch.ones(1).to(device))",
        Symbol("device"),
    ),
    "aliases": (
        "import torch as T\nfrom torch import zeros\nreveal(T.cat([zeros(1).cuda()]))",
        CUDA,
    ),
    "extra device names from settings": ("reveal(torch.ones(1).to(accel))", Symbol("accel")),
}


@pytest.mark.parametrize("name", CASES)
def test_device_of(name):
    body, expected = CASES[name]
    settings = Settings(device_names=("accel",))
    assert revealed(PRELUDE + body, settings) == expected


def test_unknown_names_are_unknown_not_cpu():
    assert revealed(PRELUDE + "reveal(mystery.to(something))") == UNKNOWN
