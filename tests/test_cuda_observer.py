"""The real CUDA backend's transfer counter watches without changing what torch does."""

from __future__ import annotations

import pytest
import torch

from devlint.harness.cuda_observer import TransferCounter
from devlint.harness.observe import Recorder

pytestmark = pytest.mark.slow  # runs torch programs or installs packages (docs/testing.md)


def test_tensors_without_a_storage_pass_through_the_counter():
    """Seen on an H200: a sparse tensor's move failed in the counter ("Cannot access storage of
    SparseTensorImpl"), not in torch."""
    with TransferCounter(Recorder()):
        sparse = torch.sparse_coo_tensor(size=(2, 2))
        nested = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])
        dense = torch.zeros(2)
    assert sparse.is_sparse and nested.is_nested and dense.sum().item() == 0
