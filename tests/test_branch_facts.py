"""What a branch knows from its test, and what a ``finally`` starts from.

Each case is the shape of a real false positive or imprecision (issue 12): a
value moved under ``if use_cuda:`` and used under the same unchanged flag, a
loop whose first iteration replaces a CPU placeholder (``if first_iter:``),
device tests (``x.is_cuda``, ``device.type == "cpu"``, availability checks, a
torch.fx tracing proxy, ``x.requires_grad``).
"""

from __future__ import annotations

import pytest
from test_analysis import PRELUDE, revealed

from devlint.config import Settings
from devlint.core.lattice import CPU, MAYBE_ACCEL, UNKNOWN, Concrete, Symbol
from devlint.running.engine import lint_source

CUDA = Concrete("cuda")
MOVED_UNDER_FLAG = "x = torch.zeros(2)\nif use_cuda:\n    x = x.cuda()\n"
ON_THE_CHOSEN_DEVICE = (
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "x = torch.zeros(2).to(device)\n"
)

CASES = {
    "the else of the same flag is the cpu side": (
        MOVED_UNDER_FLAG + "if use_cuda:\n    pass\nelse:\n    reveal(x)",
        CPU,
    ),
    "the body of the same flag is the moved side": (
        MOVED_UNDER_FLAG + "if use_cuda:\n    reveal(x)",
        CUDA,
    ),
    "a negated flag is the same flag": (
        MOVED_UNDER_FLAG + "if not use_cuda:\n    reveal(x)",
        CPU,
    ),
    "`is not None` and `is None` are one flag": (
        "x = torch.zeros(2)\nif args.gpu is not None:\n    x = x.cuda(args.gpu)\n"
        "if args.gpu is None:\n    reveal(x)",
        CPU,
    ),
    "a test spaced or bracketed another way is the same flag": (
        "x = torch.zeros(2)\nif args.gpu is not None:\n    x = x.cuda(args.gpu)\n"
        "if (args.gpu  is  None):\n    reveal(x)",
        CPU,
    ),
    "the same names grouped another way are another flag": (
        "x = torch.zeros(2)\nif a and b or c:\n    x = x.cuda()\n"
        "if a and (b or c):\n    pass\nelse:\n    reveal(x)",
        UNKNOWN,
    ),
    "after the second if the join is back": (
        MOVED_UNDER_FLAG + "if use_cuda:\n    y = 1\nreveal(x)",
        MAYBE_ACCEL,
    ),
    "a rebound flag no longer correlates": (
        MOVED_UNDER_FLAG + "use_cuda = other\nif use_cuda:\n    pass\nelse:\n    reveal(x)",
        MAYBE_ACCEL,
    ),
    "a call in the test is no flag": (
        "x = torch.zeros(2)\nif rank() == 0:\n    x = x.cuda()\nif rank() == 0:\n    pass\n"
        "else:\n    reveal(x)",
        UNKNOWN,
    ),
    "a flag split survives a loop": (
        "x = None\nfor i in range(3):\n    if x is None:\n        x = torch.zeros(2)\n"
        "        if use_cuda:\n            x = x.cuda()\n    if use_cuda:\n        pass\n"
        "    else:\n        reveal(x)",
        CPU,
    ),
    "not is_cuda of cuda-when-available is the cpu": (
        "x = torch.zeros(2)\nif torch.cuda.is_available():\n    x = x.cuda()\n"
        "if x.is_cuda:\n    pass\nelse:\n    reveal(x)",
        CPU,
    ),
    "a test that contradicts the analysis makes the tensor unknown": (
        "x = torch.zeros(2).cuda()\nif x.device.type == 'cpu':\n    reveal(x)",
        UNKNOWN,
    ),
    "no accelerator available: cuda-when-available is the cpu": (
        "x = torch.zeros(2)\nif torch.cuda.is_available():\n    x = x.cuda()\n"
        "y = torch.ones(2)\nif flag:\n    y = y.cuda()\nelse:\n    y = y.cpu()\n"
        "if not torch.cuda.is_available():\n    reveal(x)",
        CPU,
    ),
    "a name that holds torch.cuda.is_available() is an availability test": (
        ON_THE_CHOSEN_DEVICE
        + "use_gpu = torch.cuda.is_available()\nif not use_gpu:\n    reveal(x)",
        CPU,
    ),
    "without an accelerator, what the branch learnt holds after it": (
        ON_THE_CHOSEN_DEVICE + "train_on_gpu = torch.cuda.is_available()\n"
        "if train_on_gpu:\n    x = x.cpu()\nreveal(x)",
        CPU,
    ),
    "a conditional expression's branch knows its test": (
        ON_THE_CHOSEN_DEVICE + "y = reveal(x) if not torch.cuda.is_available() else None",
        CPU,
    ),
    "the other branch of a conditional expression does not": (
        ON_THE_CHOSEN_DEVICE + "y = None if not torch.cuda.is_available() else reveal(x)",
        MAYBE_ACCEL,
    ),
    "on the cpu branch of a device variable its tensors are unknown": (
        "def f(device):\n    x = torch.zeros(2, device=device)\n"
        "    if device.type == 'cpu':\n        reveal(x)",
        UNKNOWN,
    ),
    "after the cpu branch of a device variable its tensors are back on it": (
        "def f(device):\n    x = torch.zeros(2, device=device)\n"
        "    if device.type == 'cpu':\n        pass\n    reveal(x)",
        Symbol("device"),
    ),
    "finally after a body that returns starts from any point of it": (
        "def f():\n    x = torch.zeros(1)\n    try:\n        x = x.cuda()\n        return x\n"
        "    finally:\n        reveal(x)",
        UNKNOWN,
    ),
    "finally after a body that breaks sees the break": (
        "for i in range(2):\n    x = torch.zeros(1)\n    try:\n        x = x.cuda()\n"
        "        break\n    finally:\n        reveal(x)",
        UNKNOWN,
    ),
    "a symbolic-tracing proxy is somewhere the analysis cannot see": (
        "def f(x):\n    y = x.sum()\n    if is_torch_fx_proxy(y):\n        reveal(y)",
        UNKNOWN,
    ),
    "isinstance of torch.fx.Proxy says the same": (
        "def f(x):\n    y = x.cuda()\n    if isinstance(y, torch.fx.Proxy):\n        reveal(y)",
        UNKNOWN,
    ),
    "outside the proxy branch the tensor keeps its device": (
        "def f(x):\n    y = x.cuda()\n    if not is_torch_fx_proxy(y):\n        reveal(y)",
        CUDA,
    ),
    "a tensor that requires grad is the trained one of what it may be": (
        # speechbrain's ops: `bias` is a parameter, or a tensor that `requires_grad_(False)`
        "bias = torch.zeros(2)\nif bias.requires_grad:\n    reveal(bias)",
        UNKNOWN,
    ),
    "where it does not require grad it keeps its device": (
        "bias = torch.zeros(2)\nif not bias.requires_grad:\n    reveal(bias)",
        CPU,
    ),
    "finally after a body that ends normally starts from its end": (
        "x = torch.zeros(1)\ntry:\n    x = x.cuda()\nfinally:\n    reveal(x)",
        CUDA,
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_branch_fact(name: str) -> None:
    body, expected = CASES[name]
    assert revealed(PRELUDE + body) == expected


FIRST_ITERATION = """\
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.step = nn.Linear(4, 4)

    def forward(self, x):
        outputs = torch.zeros(1)
        first_iter = True
        while True:
            out = self.step(x)
            if first_iter:
                outputs = out
                first_iter = False
            else:
                outputs = torch.cat((outputs, out), dim=0)
            if out.sum() > 0:
                break
        return outputs
"""

SAME_FLAG_INDEX = """\
import torch


def extract(loader, use_cuda):
    features = None
    for samples, index in loader:
        feats = samples.cuda()
        if features is None:
            features = torch.zeros(100, feats.shape[-1])
            if use_cuda:
                features = features.cuda()
        if use_cuda:
            features.index_copy_(0, index.cuda(), feats)
        else:
            features.index_copy_(0, index.cpu(), feats.cpu())
    return features
"""


def test_a_numpy_conversion_guarded_by_a_gpu_flag_in_a_conditional_expression_is_fine():
    """The Udacity course's idiom: `.numpy()` only where no GPU is used, `.cpu()` first
    where one is; and the same without the guard is reported."""
    guarded = (
        PRELUDE
        + "import numpy as np\ntrain_on_gpu = torch.cuda.is_available()\n"
        + "model = nn.Linear(2, 2)\nif train_on_gpu:\n    model.cuda()\n"
        + "out = model(torch.ones(1, 2).cuda() if train_on_gpu else torch.ones(1, 2))\n"
        + "a = np.squeeze(out.numpy()) if not train_on_gpu else np.squeeze(out.cpu().numpy())\n"
    )
    assert [d.code for d in lint_source(guarded, "guarded.py")] == []
    unguarded = guarded.replace("if not train_on_gpu else", "if train_on_gpu else")
    assert [d.code for d in lint_source(unguarded, "unguarded.py")] == ["DVL202"]


def test_a_placeholder_replaced_on_the_first_iteration_never_meets_the_loop_body() -> None:
    """speechbrain Tacotron2: the CPU placeholder is gone before the ``else`` can run."""
    assert lint_source(FIRST_ITERATION, "decoder.py", Settings()) == []


def test_a_value_moved_under_a_flag_is_on_the_cpu_in_the_else_of_that_flag() -> None:
    """dino eval_knn: ``features`` is on the CPU exactly where ``use_cuda`` is false."""
    assert lint_source(SAME_FLAG_INDEX, "knn.py", Settings()) == []


def test_a_name_deleted_after_a_flagged_branch_does_not_break_the_next_join():
    # transformers' Reformer: `del query_vectors, key_vectors` after `if not flag:` moved them;
    # the next `if` joined a split of a name no longer bound (KeyError, a DVL003 on the file)
    source = (
        "import torch\n\n\n"
        "def f(x, flag, mask):\n"
        "    q = x\n"
        "    if not flag:\n"
        "        q = x.cuda()\n"
        "    d = torch.matmul(q, q)\n"
        "    del q\n"
        "    if mask is not None:\n"
        "        if mask.dtype == torch.float16:\n"
        "            d = d.half()\n"
        "    return d\n"
    )
    assert [finding.code for finding in lint_source(source, "attention.py", Settings())] == []
