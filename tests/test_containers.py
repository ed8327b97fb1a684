"""Tensors in containers: lists grown by ``append``, dicts unpacked into a model, indexing.

PyTorch's rules these cases encode: ``torch.cat``/``torch.stack`` need one
device; ``t[idx]`` with a tensor ``idx`` accepts cpu indices into a GPU
tensor but not GPU indices into a cpu tensor; ``t[idx] = v`` (``index_put_``)
needs ``v`` on ``t``'s device unless ``v`` is 0-dim, while basic indexing
(``t[0] = v``) copies across devices.
"""

from __future__ import annotations

import textwrap

import pytest
from test_analysis import PRELUDE, revealed

from devlint.config import Settings
from devlint.core.lattice import CPU, UNKNOWN, Symbol
from devlint.running.engine import lint_source

LIST_CASES = {
    "a list grown by append holds what was appended": (
        "feats = []\nfor v in loader:\n    feats.append(v.to(device).cpu())\n"
        "reveal(torch.cat(feats, dim=0))",
        CPU,
    ),
    "extend adds the elements of its argument": (
        "feats = []\nfeats.extend([torch.zeros(1).to(device)])\nreveal(torch.stack(feats))",
        Symbol("device"),
    ),
    "appends on two devices join to unknown": (
        "feats = []\nfeats.append(torch.zeros(1).to(device))\nfeats.append(torch.zeros(1))\n"
        "reveal(torch.stack(feats))",
        UNKNOWN,
    ),
    "a list grown by a call the analysis cannot see stays unknown": (
        "feats = fill()\nfeats.append(torch.zeros(1))\nreveal(torch.stack(feats))",
        UNKNOWN,
    ),
}


@pytest.mark.parametrize("name", LIST_CASES)
def test_list_element(name: str) -> None:
    body, expected = LIST_CASES[name]
    assert revealed(PRELUDE + body) == expected


LOOP = """\
import torch
from torch import nn
from torch.utils.data import DataLoader


def train(dataset, device):
    model = nn.Linear(4, 2).to(device)
    for batch in DataLoader(dataset):
{body}
"""


def findings(body: str, template: str = LOOP) -> list[tuple[str, int]]:
    """Codes and lines of what devlint reports on ``template`` with ``body`` filled in."""
    source = template.format(body=body)
    return [(f.code, f.line) for f in lint_source(source, "example.py", Settings())]


def test_an_unmoved_dict_batch_unpacked_into_the_model_is_reported() -> None:
    assert findings("        out = model(**batch)") == [("DVL301", 9)]


def test_a_dict_batch_moved_by_a_comprehension_is_not_reported() -> None:
    body = (
        "        batch = {k: v.to(device) for k, v in batch.items()}\n        out = model(**batch)"
    )
    assert findings(body) == []


INDEXING = """\
import torch


def f(device):
    table = torch.zeros(10, 3)
    out = torch.zeros(10, 3, device=device)
    idx = torch.arange(3, device=device)
    rows = values = torch.ones(3, 3)
{body}
"""


def test_gpu_indices_into_a_cpu_tensor_are_reported() -> None:
    assert findings("    rows = table[idx]", INDEXING) == [("DVL105", 9)]


def test_cpu_indices_into_a_gpu_tensor_are_accepted() -> None:
    assert findings("    rows = out[idx.cpu()]", INDEXING) == []


def test_indexed_assignment_of_a_cpu_tensor_into_a_gpu_tensor_is_reported() -> None:
    assert findings("    out[idx] = values", INDEXING) == [("DVL101", 9)]


def test_basic_indexing_and_scalars_copy_across_devices() -> None:
    body = "    out[0] = values\n    out[idx] = 0.5\n    out[idx] = torch.tensor(0.5)"
    assert findings(body, INDEXING) == []


def test_an_item_of_a_local_dataset_is_what_its_getitem_returns():
    # RAFT's validation loops index their dataset directly: `image1, image2, _ = ds[i]`
    source = """\
        import torch
        from torch import nn
        from torch.utils.data import Dataset

        class Pairs(Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, index):
                return torch.zeros(3, 8, 8), torch.zeros(3, 8, 8), index

        model = nn.Conv2d(3, 8, 3).cuda()
        image1, image2, _ = Pairs()[0]
        print(model(image1[None]), model(image2[None].cuda()))
        """
    found = lint_source(textwrap.dedent(source), "example.py", Settings())
    assert [(f.code, f.line) for f in found] == [("DVL102", 14)]


def test_a_getitem_returning_tuples_of_two_lengths_is_read_by_how_many_names_unpack_it():
    # RAFT's FlowDataset returns three items in test mode and four otherwise: unpacking
    # four names can only succeed on the four-item path, and three names on the other.
    source = """\
        import torch
        from torch import nn
        from torch.utils.data import Dataset

        class Flows(Dataset):
            def __init__(self, is_test):
                self.is_test = is_test

            def __getitem__(self, index):
                image = torch.zeros(3, 8, 8)
                if self.is_test:
                    return image, image.cuda(), index
                return image.cuda(), image, image, image

        model = nn.Conv2d(3, 8, 3).cuda()
        data = Flows(False)
        image1, image2, flow, valid = data[0]
        print(model(image1[None]), model(image2[None]))
        first, second, extra = data[1]
        print(model(first[None]), model(second[None]))
        print(model(data[2][0][None]))
        """
    found = lint_source(textwrap.dedent(source), "example.py", Settings())
    assert [(f.code, f.line) for f in found] == [("DVL102", 18), ("DVL102", 20)]
