"""The mutation-recall benchmark's injector: which sites it finds and what each mutant is."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks/realworld/mutation"))
from inject import mutants

SOURCE = """\
import numpy as np
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.ones(3))
        self.scale = nn.Parameter(torch.ones(3))
        self.blocks = nn.ModuleList([nn.Linear(3, 3)])

    def forward(self, x):
        steps = torch.arange(3, device=x.device)
        return self.blocks[0](x * self.mask * self.scale) + steps.to(x.dtype)


device = torch.device("cuda")
model = Net()
model.to(device)
for batch in [torch.ones(2, 3)]:
    batch = batch.to(device, torch.float64)
    out = model(batch)
    print(out.cpu().detach().numpy())
    state = torch.load("model.pt", map_location=device)
"""


def _by_kind():
    found = {}
    for mutant in mutants(SOURCE):
        found.setdefault(mutant.kind, []).append(mutant)
    return found


def test_one_mutant_per_site_of_each_kind():
    counts = {kind: len(found) for kind, found in _by_kind().items()}
    assert counts == {
        "batch-transfer-dropped": 1,
        "model-transfer-dropped": 1,
        "transfer-result-discarded": 1,
        "factory-device-dropped": 1,
        "buffer-to-attribute": 1,
        "parameter-to-attribute": 1,
        "module-list-to-list": 1,
        "cpu-before-numpy-dropped": 1,
        "map-location-dropped": 1,
    }


def test_each_mutant_changes_only_its_site_and_names_its_lines():
    found = _by_kind()
    (buffer,) = found["buffer-to-attribute"]
    assert buffer.after == "self.mask = torch.ones(3)"
    assert buffer.lines == (9, 9)
    (batch,) = found["batch-transfer-dropped"]
    assert batch.after == "batch.to(torch.float64)", "the dtype the transfer also set is kept"
    (discarded,) = found["transfer-result-discarded"]
    assert "\n    batch.to(device, torch.float64)\n" in discarded.source
    (model,) = found["model-transfer-dropped"]
    assert "\npass\n" in model.source and model.lines == (20, 20)
    (numpy,) = found["cpu-before-numpy-dropped"]
    assert "print(out.detach().numpy())" in numpy.source
    for mutant in (m for kind in found.values() for m in kind):
        assert mutant.source.count("\n") == SOURCE.count("\n"), "lines keep their numbers"


def test_a_transfer_that_only_changes_dtype_is_no_site():
    source = "import torch\nx = torch.ones(2)\ny = x.to(torch.float16)\n"
    assert mutants(source) == []


def test_an_element_of_a_batch_comprehension_is_a_batch_site():
    source = "def f(batch, device):\n    return [t.to(device) for t in batch]\n"
    assert [(m.kind, m.after) for m in mutants(source)] == [("batch-transfer-dropped", "t")]


def test_a_legacy_tensor_constructor_moved_is_a_tensor_site_not_a_model():
    source = "import torch\ndef f(s, device):\n    return torch.FloatTensor(s).to(device)\n"
    assert [m.kind for m in mutants(source)] == ["tensor-transfer-dropped"]
