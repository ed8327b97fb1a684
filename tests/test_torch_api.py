"""The torch API table: spot checks, loading without torch, and freshness against torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from devlint.core.torch_api import (
    CallKind,
    CallSpec,
    ModuleSpec,
    device_named_moves,
    is_optimizer,
    moves,
    nn_module,
    tensor_method,
    torch_function,
    torch_version,
)

ROOT = Path(__file__).resolve().parent.parent
F = "torch.nn.functional."


def spec(qualname: str) -> CallSpec:
    found = torch_function(qualname)
    assert found is not None, qualname
    return found


def method(name: str) -> CallSpec:
    found = tensor_method(name)
    assert found is not None, name
    return found


def test_factories() -> None:
    zeros = spec("torch.zeros")
    assert zeros.kind is CallKind.FACTORY
    assert zeros.size_params
    assert spec("torch.randn").size_params
    assert spec("torch.arange").kind is CallKind.FACTORY
    assert not spec("torch.arange").size_params
    assert spec("torch.from_numpy").kind is CallKind.FACTORY
    assert spec("torch.tensor").kind is CallKind.FACTORY
    assert spec("torch.scalar_tensor").reduces  # always 0-dim


def test_like() -> None:
    assert spec("torch.zeros_like").kind is CallKind.LIKE
    assert spec("torch.zeros_like").tensor_params == ("input",)
    assert method("new_zeros").kind is CallKind.LIKE
    assert method("new_zeros").tensor_params == ()


def test_tensor_iterator_ops_accept_a_cpu_scalar() -> None:
    # elementwise (TensorIterator) ops accept a CPU 0-dim operand next to a CUDA tensor
    add = spec("torch.add")
    assert add.kind is CallKind.COMBINE
    assert add.tensor_params == ("input", "other")
    assert not add.strict
    for name in ("torch.mul", "torch.where", "torch.lerp", "torch.clamp", "torch.masked_fill"):
        assert spec(name).kind is CallKind.COMBINE, name
        assert not spec(name).strict, name
    assert spec("torch.where").tensor_params == ("condition", "input", "other")
    masked_fill = method("masked_fill")
    assert masked_fill.kind is CallKind.COMBINE
    assert not masked_fill.strict
    assert masked_fill.tensor_params == ("mask", "value")


def test_strict_ops() -> None:
    # non-TensorIterator kernels check that every tensor is on one device
    assert spec("torch.mm").kind is CallKind.COMBINE
    assert spec("torch.mm").strict
    cat = spec("torch.cat")
    assert cat.kind is CallKind.COMBINE
    assert cat.strict
    assert cat.sequence_param == "tensors"
    assert cat.tensor_params == ("tensors",)
    for name in (
        "torch.matmul",
        "torch.bmm",
        "torch.stack",
        "torch.einsum",
        "torch.index_select",
        "torch.gather",
        F + "linear",
        F + "conv2d",
        F + "embedding",
    ):
        assert spec(name).kind is CallKind.COMBINE, name
        assert spec(name).strict, name
    cross_entropy = spec(F + "cross_entropy")
    assert cross_entropy.kind is CallKind.COMBINE
    assert cross_entropy.strict
    assert cross_entropy.tensor_params[:2] == ("input", "target")
    assert cross_entropy.reduces  # reduction="mean"


def test_inherit_and_reductions() -> None:
    assert spec("torch.relu").kind is CallKind.INHERIT
    assert spec(F + "relu").kind is CallKind.INHERIT
    assert spec("torch.special.expit").kind is CallKind.INHERIT
    assert spec("torch.fft.fft").kind is CallKind.INHERIT
    assert spec("torch.linalg.norm").reduces
    assert method("sum").reduces
    assert method("sum").kind is CallKind.INHERIT
    assert spec("torch.mean").reduces
    assert not spec("torch.exp").reduces
    assert not method("squeeze").reduces
    assert spec("torch.dot").reduces
    # shape-only uses of the other tensor do not combine devices
    assert method("view_as").kind is CallKind.INHERIT
    assert method("expand_as").kind is CallKind.INHERIT


def test_non_tensor() -> None:
    for name in ("torch.numel", "torch.is_tensor", "torch.is_floating_point"):
        assert spec(name).kind is CallKind.NON_TENSOR, name
    for name in ("item", "tolist", "size", "dim", "numel"):
        assert method(name).kind is CallKind.NON_TENSOR, name


def test_transfers_are_left_to_the_analysis() -> None:
    # copy_ crosses devices by design: it must never be a same-device requirement
    for name in ("to", "cuda", "cpu", "copy_", "type"):
        assert tensor_method(name) is None, name
    # advanced indexing accepts CPU indices next to a CUDA tensor
    assert method("index_put_").kind is not CallKind.COMBINE


def test_the_moves_the_analysis_follows_come_from_the_transfers() -> None:
    # the table's transfers also hold copy_, set_, type, type_as and the moves to devices
    # no rule is about (xpu, ipu, mtia): none of them is a move of the analysis
    assert moves() == {"to", "cuda", "cpu"}
    # `.to()` may convert a dtype; these two always send their receiver to a device
    assert device_named_moves() == {"cuda", "cpu"}


def test_unknown_names() -> None:
    assert torch_function("torch.no_such_function") is None
    assert torch_function("torch._foreach_add") is None
    assert tensor_method("no_such_method") is None
    assert nn_module("torch.nn.NoSuchModule") is None


def test_modules() -> None:
    assert nn_module("torch.nn.Linear") == ModuleSpec(stateful=True, loss=False)
    assert nn_module("torch.nn.modules.linear.Linear") == ModuleSpec(stateful=True, loss=False)
    assert nn_module("torch.nn.Conv2d") == ModuleSpec(stateful=True, loss=False)
    assert nn_module("torch.nn.BatchNorm1d") == ModuleSpec(stateful=True, loss=False)
    assert nn_module("torch.nn.ReLU") == ModuleSpec(stateful=False, loss=False)
    assert nn_module("torch.nn.Dropout") == ModuleSpec(stateful=False, loss=False)
    assert nn_module("torch.nn.CrossEntropyLoss") == ModuleSpec(stateful=False, loss=True)
    assert nn_module("torch.nn.MSELoss") == ModuleSpec(stateful=False, loss=True)
    # state depends on the contents: unknown
    sequential = nn_module("torch.nn.Sequential")
    assert sequential is not None
    assert sequential.stateful is None


def test_optimizers() -> None:
    assert is_optimizer("torch.optim.SGD")
    assert is_optimizer("torch.optim.Adam")
    assert is_optimizer("torch.optim.AdamW")
    assert not is_optimizer("torch.optim.lr_scheduler.StepLR")
    assert not is_optimizer("torch.nn.Linear")


def test_version_is_recorded() -> None:
    assert torch_version()[:1].isdigit()


def test_loader_needs_no_torch() -> None:
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from devlint.core import torch_api\n"
        "assert torch_api.torch_function('torch.add').kind is torch_api.CallKind.COMBINE\n"
        "assert torch_api.nn_module('torch.nn.Linear').stateful\n"
        "assert sys.modules['torch'] is None\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def test_committed_table_matches_installed_torch() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_torch_api.py"), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
