"""DVL408: which CPU tensors in ``torch.distributed`` collectives are reported, and how."""

from __future__ import annotations

import pytest

from devlint.running.engine import lint_source

SYNC_SEED = """\
import random
import torch
import torch.distributed as dist
{setup}

def sync_seed():
    seed = torch.tensor(random.randrange(10_000))
    dist.all_reduce(seed{group})
    return seed.item()
"""


def findings(setup: str = "", group: str = "") -> list[tuple[int, str, str]]:
    source = SYNC_SEED.format(setup=setup, group=group)
    return [
        (finding.line, finding.code, finding.severity.value)
        for finding in lint_source(source, "seed.py")
    ]


def test_a_seed_created_on_the_cpu_and_all_reduced_is_a_warning():
    """The library does not choose the backend; multi-GPU training usually asks for NCCL."""
    assert findings() == [(8, "DVL408", "warning")]


def test_it_is_an_error_where_the_file_asks_for_nccl_alone():
    assert findings(setup='dist.init_process_group("nccl")') == [(8, "DVL408", "error")]


@pytest.mark.parametrize(
    "setup",
    [
        "dist.init_process_group()",  # PyTorch 2 pairs gloo with NCCL
        'dist.init_process_group(backend="gloo")',
        'dist.init_process_group("cpu:gloo,cuda:nccl")',
        'cpu_group = dist.new_group(backend="gloo")',
    ],
)
def test_a_file_that_asks_for_a_cpu_backend_is_left_alone(setup):
    assert findings(setup=setup) == []


def test_a_collective_on_a_group_out_of_view_is_left_alone():
    assert findings(group=", group=group") == []


def test_a_tensor_created_on_the_device_is_fine():
    source = SYNC_SEED.replace("randrange(10_000))", 'randrange(10_000), device="cuda")')
    assert lint_source(source.format(setup="", group=""), "seed.py") == []


def test_a_tensor_of_unknown_device_is_left_alone():
    source = SYNC_SEED.replace("torch.tensor(random.randrange(10_000))", "make_seed()")
    assert lint_source(source.format(setup="", group=""), "seed.py") == []
