"""The emulated machine around the tensors: modules, autograd, checkpoints, loaders, streams."""

from __future__ import annotations

import inspect
import io
import math

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from devlint.harness import observe  # noqa: E402
from devlint.harness.emulator import emulated  # noqa: E402


@pytest.fixture
def gpus():
    with emulated(2) as emulation:
        yield emulation


def transfers(emulation, kind):
    return sum(
        count for (k, _, _), (count, _) in emulation.state.recorder.transfers.items() if k == kind
    )


def test_a_moved_module_trains_on_the_gpu(gpus):
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)).to("cuda")
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    inputs = torch.randn(16, 4, device="cuda")
    loss = model(inputs).pow(2).mean()
    loss.backward()
    optimizer.step()
    weight = model[0].weight
    assert weight.device.type == "cuda" and weight.grad.device.type == "cuda"
    assert isinstance(weight, nn.Parameter) and math.isfinite(loss.item())


def test_a_module_called_with_a_cpu_input_fails_in_addmm(gpus):
    model = nn.Linear(4, 2).cuda()
    with pytest.raises(RuntimeError, match=r"got mat1 is on cpu.*wrapper_CUDA_addmm"):
        model(torch.randn(3, 4))


def test_a_plain_tensor_attribute_is_not_moved_with_its_module(gpus):
    class Masked(nn.Module):
        def __init__(self):
            super().__init__()
            self.mask = torch.ones(3)
            self.register_buffer("scale", torch.ones(3))

    module = Masked().to("cuda")
    assert module.scale.device.type == "cuda" and module.mask.device.type == "cpu"


def test_a_checkpoint_restores_to_its_gpu_unless_mapped(gpus):
    buffer = io.BytesIO()
    torch.save({"w": torch.ones(2, device="cuda:1")}, buffer)
    buffer.seek(0)
    assert torch.load(buffer)["w"].device == torch.device("cuda:1")
    buffer.seek(0)
    assert torch.load(buffer, map_location="cpu")["w"].device.type == "cpu"
    buffer.seek(0)
    assert torch.load(buffer, map_location="cuda:0")["w"].device.index == 0


def test_a_gpu_checkpoint_without_gpus_fails_with_pytorchs_message():
    buffer = io.BytesIO()
    with emulated(1):
        torch.save(torch.ones(2, device="cuda"), buffer)
    buffer.seek(0)
    with (
        emulated(0),
        pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA"),
    ):
        torch.load(buffer)


def test_a_non_blocking_copy_to_the_host_lands_when_the_host_synchronises(gpus):
    device = torch.full((4,), 3.0, device="cuda")
    host = device.to("cpu", non_blocking=True)
    assert host.is_pinned() and torch.isnan(host).all()
    torch.cuda.synchronize()
    assert host.tolist() == [3.0] * 4


def test_a_blocking_copy_also_waits_for_earlier_copies(gpus):
    host = torch.ones(2, device="cuda").to("cpu", non_blocking=True)
    torch.ones(1, device="cuda").item()
    assert host.tolist() == [1.0, 1.0]


def test_transfers_are_counted_by_direction(gpus):
    x = torch.ones(4).to("cuda")
    x.cpu()
    x.to("cuda:1")
    assert transfers(gpus, observe.HOST_TO_DEVICE) == 1
    assert transfers(gpus, observe.DEVICE_TO_HOST) == 1
    assert transfers(gpus, observe.DEVICE_TO_DEVICE) == 1


def test_creating_on_the_host_and_moving_on_the_same_line_is_measured(gpus):
    line = inspect.currentframe().f_lineno + 1
    torch.randn(8).to("cuda")
    torch.randn(8, device="cuda")
    nn.Linear(2, 2).to("cuda")  # a module's own parameters are not the program's creation
    assert gpus.state.recorder.symptoms() == [
        f"{observe.CREATED_THEN_MOVED}: 1 copies at test_emulator_runtime.py:{line}"
    ]


def test_the_cuda_queries_answer_for_the_virtual_gpus(gpus):
    assert torch.cuda.get_device_name(0) and torch.cuda.current_device() == 0
    with torch.cuda.device(1):
        assert torch.cuda.current_device() == 1
        assert torch.zeros(1, device="cuda").device.index == 1
    before = torch.cuda.memory_allocated(0)
    block = torch.empty(1024, device="cuda:0")
    assert torch.cuda.memory_allocated(0) == before + 4096
    del block
    assert torch.accelerator.is_available() and torch.accelerator.device_count() == 2


def test_cuda_visible_devices_hides_gpus(monkeypatch):
    from devlint.harness.launch import visible_gpus

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert visible_gpus(2) == 0
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert visible_gpus(2) == 1


def test_data_parallel_checks_placement_scatters_and_prefixes_keys(gpus):
    unmoved = nn.DataParallel(nn.Linear(4, 2))
    with pytest.raises(RuntimeError, match=r"on device cuda:0 \(device_ids\[0\]\)"):
        unmoved(torch.randn(4, 4))
    model = nn.DataParallel(nn.Linear(4, 2).cuda())
    out = model(torch.randn(6, 4))
    out.sum().backward()
    assert out.device == torch.device("cuda:0") and out.shape == (6, 2)
    assert model.module.weight.grad.device.type == "cuda"
    assert list(model.state_dict()) == ["module.weight", "module.bias"]


def test_a_loader_pins_cpu_batches_and_refuses_gpu_ones(gpus):
    from torch.utils.data import DataLoader, TensorDataset

    cpu = DataLoader(TensorDataset(torch.randn(8, 2)), batch_size=4, pin_memory=True)
    assert all(batch.is_pinned() for (batch,) in cpu)
    gpu = DataLoader(TensorDataset(torch.randn(8, 2).cuda()), batch_size=4, pin_memory=True)
    with pytest.raises(RuntimeError, match="cannot pin"):
        next(iter(gpu))


def test_cuda_in_a_forked_loader_worker_fails(gpus):
    from torch.utils.data import DataLoader, Dataset

    class OnDevice(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, index):
            return torch.ones(1).to("cuda")

    torch.ones(1, device="cuda")  # CUDA is initialised before the workers fork
    loader = DataLoader(OnDevice(), batch_size=2, num_workers=1, multiprocessing_context="fork")
    with pytest.raises(RuntimeError, match="Cannot re-initialize CUDA in forked subprocess"):
        next(iter(loader))
