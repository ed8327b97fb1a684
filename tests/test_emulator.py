"""The emulator applies PyTorch's device rules with CUDA's errors, and allows what CUDA allows.

Each case cites the rule it encodes (docs/harness.md has the table). The
emulation is installed in this process for one test at a time and removed.
"""

from __future__ import annotations

import pytest
import torch

from devlint.harness.emulator import emulated

pytestmark = pytest.mark.slow  # runs torch programs or installs packages (docs/testing.md)

F = torch.nn.functional

SAME_DEVICE = "Expected all tensors to be on the same device"


@pytest.fixture
def gpus():
    with emulated(2) as emulation:
        yield emulation


def test_factories_with_device_land_on_the_virtual_gpu(gpus):
    assert torch.cuda.is_available() and torch.cuda.device_count() == 2
    x = torch.randn(3, device="cuda")
    assert (x.device, x.is_cuda, x.get_device()) == (torch.device("cuda:0"), True, 0)
    assert torch.zeros(2, device="cuda:1").device == torch.device("cuda:1")
    assert torch.tensor([1.0, 2.0], device="cuda").device.type == "cuda"
    assert torch.arange(3, device=torch.device("cuda", 1)).device.index == 1
    assert "device='cuda:0'" in repr(torch.ones(2, device="cuda"))


def test_values_are_real_and_come_back_with_cpu(gpus):
    x = torch.tensor([1.0, 2.0, 3.0], device="cuda")
    y = (x * 2).cpu()
    assert y.device.type == "cpu" and y.tolist() == [2.0, 4.0, 6.0]
    assert x.to("cpu").device.type == "cpu"


def test_moving_to_the_same_device_returns_the_tensor_itself(gpus):
    x = torch.ones(2, device="cuda")
    assert x.to("cuda") is x and x.cuda() is x and x.to("cuda:0") is x
    assert x.to("cuda:1").device.index == 1


def test_elementwise_ops_on_two_devices_fail_like_tensor_iterator(gpus):
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cpu!"):
        torch.ones(2, device="cuda") + torch.ones(2)
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cuda:1!"):
        torch.ones(2, device="cuda:0") * torch.ones(2, device="cuda:1")


def test_a_cpu_zero_dim_tensor_and_python_scalars_may_join_a_cuda_op(gpus):
    x = torch.ones(3, device="cuda")
    assert (x / torch.tensor(2.0)).device.type == "cuda"
    assert (x * 3 + 1.5).device.type == "cuda"
    assert torch.where(x > 0, x, 0.0).device.type == "cuda"


def test_a_composite_without_the_generated_check_leaves_it_to_its_pointwise_ops(gpus):
    """Seen on an H200: BCEWithLogitsLoss takes a 0-dim CPU pos_weight beside CUDA logits
    (``device_check: NoCheck``), and a 1-element one fails in the ops it runs."""
    logits, targets = torch.randn(4, 1, device="cuda"), torch.ones(4, 1, device="cuda")
    loss = F.binary_cross_entropy_with_logits(logits, targets, pos_weight=torch.tensor(3.0))
    assert loss.device.type == "cuda"
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cpu!"):
        F.binary_cross_entropy_with_logits(logits, targets, pos_weight=torch.tensor([3.0]))


def test_two_cpu_scalars_in_one_cuda_kernel_are_refused(gpus):
    x = torch.ones(3, device="cuda")
    with pytest.raises(RuntimeError, match="too many CPU scalars"):
        torch.where(x > 0, torch.tensor(1.0), torch.tensor(0.0))


def test_a_cuda_zero_dim_tensor_may_not_join_a_cpu_op(gpus):
    with pytest.raises(RuntimeError, match="found at least two devices, cpu and cuda:0!"):
        torch.ones(3) + torch.tensor(1.0, device="cuda")


def test_kernels_name_the_argument_on_the_other_device(gpus):
    table = torch.randn(5, 4, device="cuda")
    with pytest.raises(RuntimeError) as raised:
        table.index_select(0, torch.tensor([1, 2]))
    assert str(raised.value) == (
        "Expected all tensors to be on the same device, but got index is on cpu, different from "
        "other tensors on cuda:0 (when checking argument in method wrapper_CUDA__index_select)"
    )
    with pytest.raises(RuntimeError, match=r"got mat2 is on cpu.*wrapper_CUDA_mm"):
        table @ torch.randn(4, 2)


def test_embedding_with_cpu_indices_fails_as_index_select(gpus):
    weight = torch.randn(10, 3, device="cuda")
    with pytest.raises(RuntimeError, match=r"got index is on cpu.*wrapper_CUDA__index_select"):
        F.embedding(torch.tensor([1, 2]), weight)
    assert F.embedding(torch.tensor([1, 2], device="cuda"), weight).device.type == "cuda"


def test_advanced_indexing_moves_cpu_indices(gpus):
    x = torch.arange(6.0, device="cuda")
    picked = x[torch.tensor([0, 5])]
    assert picked.device.type == "cuda" and picked.tolist() == [0.0, 5.0]
    assert x[torch.tensor([True, False] * 3)].device.type == "cuda"
    x[torch.tensor([1])] = -1.0
    assert x[1].item() == -1.0


def test_indexing_a_cpu_tensor_with_cuda_indices_fails(gpus):
    with pytest.raises(
        RuntimeError, match=r"indices should be either on cpu or on the same device"
    ):
        torch.arange(4)[torch.tensor([0], device="cuda")]


def test_writing_through_indices_on_another_device_moves_them(gpus):
    """``index_put_`` moves its indices to the written tensor's device (``make_info``); only
    ``index`` (a read) checks where they are. The values must be on the tensor's device."""
    on_cpu = torch.zeros(4)
    on_cpu[torch.tensor([True, False, True, False], device="cuda")] = 3.0
    assert on_cpu.tolist() == [3.0, 0.0, 3.0, 0.0]
    on_cpu[torch.tensor([1], device="cuda")] = torch.tensor(5.0)  # a 0-dim value
    assert on_cpu[1].item() == 5.0
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        on_cpu[torch.tensor([0, 1])] = torch.ones(2, device="cuda")


def test_masked_fill_and_take_along_dim_word_their_own_errors(gpus):
    scores = torch.randn(3, 3, device="cuda")
    with pytest.raises(RuntimeError, match="expected self and mask to be on the same device"):
        scores.masked_fill(torch.ones(3, 3, dtype=torch.bool), 0.0)
    with pytest.raises(RuntimeError, match=r"take_along_dim\(\): input and indices should be"):
        torch.take_along_dim(scores, torch.zeros(3, 1, dtype=torch.long), dim=1)


def test_copy_crosses_devices_by_design(gpus):
    host = torch.zeros(3)
    host.copy_(torch.ones(3, device="cuda"))
    device = torch.zeros(3, device="cuda")
    device.copy_(torch.full((3,), 2.0))
    assert host.tolist() == [1.0] * 3 and device.cpu().tolist() == [2.0] * 3
    assert host.device.type == "cpu" and device.device.type == "cuda"


def test_numpy_of_a_cuda_tensor_is_refused(gpus):
    x = torch.ones(2, device="cuda")
    with pytest.raises(TypeError) as raised:
        x.numpy()
    assert str(raised.value) == (
        "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
        "to host memory first."
    )
    assert x.cpu().numpy().tolist() == [1.0, 1.0]


def test_pinning_a_cuda_tensor_is_refused_and_cpu_tensors_pin(gpus):
    refused = r"cannot pin 'torch\.cuda\.FloatTensor' only dense CPU tensors"  # as on an H200
    with pytest.raises(RuntimeError, match=refused):
        torch.ones(2, device="cuda").pin_memory()
    pinned = torch.ones(2).pin_memory()
    assert pinned.is_pinned() and not torch.ones(2).is_pinned()


def test_convolution_input_and_weight_types_must_match(gpus):
    conv = torch.nn.Conv2d(1, 1, 3).cuda()
    with pytest.raises(RuntimeError, match=r"Input type \(CPUFloatType\) and weight type \(CUDA"):
        conv(torch.randn(1, 1, 5, 5))
    assert conv(torch.randn(1, 1, 5, 5, device="cuda")).device.type == "cuda"


def test_an_ordinal_beyond_the_gpus_is_invalid(gpus):
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.zeros(1, device="cuda:2")


def test_helpers_built_inside_a_gpu_call_stay_on_that_gpu(gpus):
    ids = torch.tensor([0, 2], device="cuda")
    assert F.one_hot(ids, 3).device.type == "cuda"
    assert F.pad(torch.ones(2, 2, device="cuda"), (1, 1)).device.type == "cuda"
    assert torch.ones(2, device="cuda").new_zeros(3, device="cpu").device.type == "cpu"


def test_uninstalling_restores_a_plain_cpu_torch():
    with emulated(1):
        assert torch.cuda.device_count() == 1
    assert not torch.cuda.is_available()
    assert torch.ones(1).device.type == "cpu"
    with pytest.raises((RuntimeError, AssertionError)):
        torch.ones(1, device="cuda")


def test_packed_sequences_keep_lengths_and_batch_sizes_on_the_cpu(gpus):
    """A CUDA build reads a packed sequence's lengths and batch sizes on the host: CPU
    lengths pack a GPU batch, the LSTM runs on it, and unpacking returns CPU lengths."""
    rnn = torch.nn.utils.rnn
    lstm = torch.nn.LSTM(4, 3, batch_first=True).to("cuda")
    padded = torch.randn(2, 5, 4, device="cuda")
    packed = rnn.pack_padded_sequence(padded, torch.tensor([5, 3]), batch_first=True)
    assert (packed.data.device.type, packed.batch_sizes.device.type) == ("cuda", "cpu")
    output, lengths = rnn.pad_packed_sequence(lstm(packed)[0], batch_first=True)
    assert (output.device.type, lengths.device.type) == ("cuda", "cpu")
    assert lengths.tolist() == [5, 3]
    unsorted = rnn.pack_padded_sequence(
        padded, torch.tensor([3, 5]), batch_first=True, enforce_sorted=False
    )
    output, lengths = rnn.pad_packed_sequence(lstm(unsorted)[0], batch_first=True)
    assert (output.device.type, lengths.device.type, lengths.tolist()) == ("cuda", "cpu", [3, 5])


def test_lengths_on_a_gpu_are_refused_as_pytorch_refuses_them(gpus):
    padded = torch.randn(2, 5, 4, device="cuda")
    lengths = torch.tensor([5, 3], device="cuda")
    with pytest.raises(RuntimeError) as error:
        torch.nn.utils.rnn.pack_padded_sequence(padded, lengths, batch_first=True)
    assert str(error.value) == (
        "'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor"
    )
