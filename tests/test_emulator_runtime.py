"""The emulated machine around the tensors: modules, autograd, checkpoints, loaders, streams."""

from __future__ import annotations

import inspect
import io
import math

import pytest
import torch

from devlint.harness import observe
from devlint.harness.emulator import emulated
from devlint.harness.emulator.state import FORKED_AFTER_INIT

pytestmark = pytest.mark.slow  # runs torch programs or installs packages (docs/testing.md)

nn = torch.nn


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
    assert observe.symptoms(gpus.state.recorder.to_json()["created_then_moved"]) == [
        f"{observe.CREATED_THEN_MOVED}: 1 copy at test_emulator_runtime.py:{line}"
    ]


def test_a_cast_by_dtype_keeps_the_device_and_a_legacy_type_name_picks_one(gpus):
    """``Tensor.type``: a dtype casts in place; ``torch.X``/``torch.cuda.X`` names choose the host
    or a GPU (the tensor's own GPU when it is on one, else the current one), as CUDA builds do."""
    gpu = torch.ones(2, device="cuda:1")
    assert gpu.type(torch.float16).device == torch.device("cuda:1")
    assert gpu.type(torch.float16).type() == "torch.cuda.HalfTensor"
    assert gpu.type(torch.float32) is gpu and gpu.type("torch.cuda.FloatTensor") is gpu
    assert gpu.type("torch.cuda.HalfTensor").device == torch.device("cuda:1")
    assert gpu.type(torch.cuda.DoubleTensor).device == torch.device("cuda:1")
    assert gpu.type("torch.FloatTensor").device.type == "cpu"
    assert gpu.type(torch.LongTensor).dtype == torch.int64
    assert gpu.type(torch.LongTensor).device.type == "cpu"
    assert torch.ones(2).type("torch.cuda.FloatTensor").device == torch.device("cuda:0")
    assert torch.ones(2).type(torch.float16).device.type == "cpu"
    for cast in (gpu.float, gpu.half, gpu.double, gpu.bfloat16, gpu.long):
        assert cast().device == torch.device("cuda:1")
    with pytest.raises(ValueError, match=r"invalid type: 'torch\.Bogus'"):
        gpu.type("torch.Bogus")


def test_type_as_takes_the_other_tensors_device_and_dtype(gpus):
    """``a.type_as(b)`` is ``a.to(b.options())`` in ATen: a CPU tensor typed as a GPU one moves."""
    gpu = torch.ones(2, device="cuda:1", dtype=torch.float16)
    moved = torch.ones(2).type_as(gpu)
    assert moved.device == torch.device("cuda:1") and moved.dtype == torch.float16
    assert gpu.type_as(torch.zeros(1)).device.type == "cpu"
    assert gpu.type_as(gpu) is gpu


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


def test_device_properties_of_a_missing_gpu_fail_as_torch_cuda_does(gpus):
    """``get_device_properties`` asserts the index (seen on an H200 through DataParallel)."""
    assert torch.cuda.get_device_capability(1)
    with pytest.raises(AssertionError, match="Invalid device id"):
        torch.cuda.get_device_properties(2)
    with pytest.raises(AssertionError, match="Invalid device id"):
        nn.DataParallel(nn.Linear(2, 2).cuda(), device_ids=[0, 2])


def test_each_gpu_has_a_default_generator(gpus):
    """``torch.cuda.get_rng_state(i)`` indexes ``default_generators`` (Lightning's
    ``isolate_rng`` failed with an IndexError here before, and not on an H200)."""
    assert len(torch.cuda.default_generators) == 2
    assert len(torch.cuda.get_rng_state_all()) == 2


def test_constructors_given_a_gpu_tensor_and_the_host_copy_it_there(gpus):
    """Seen on an H200: ``device="cpu"`` wins over the data's device (issue 35, item 1)."""
    gpu = torch.ones(2, device="cuda", requires_grad=True)
    for made in (torch.as_tensor(gpu, device="cpu"), torch.asarray(gpu, device="cpu")):
        assert made.device.type == "cpu" and (made + torch.ones(2)).device.type == "cpu"
    copied = torch.tensor(gpu, device="cpu", requires_grad=True)
    assert copied.device.type == "cpu" and copied.is_leaf and copied.requires_grad
    assert torch.as_tensor(gpu).device.type == "cuda"


def test_the_gradient_of_a_moved_tensor_goes_back_to_its_device(gpus):
    """Seen on an H200: a host leaf used on the GPU gets a host gradient, and a GPU leaf used on
    the host a GPU one, so an optimizer steps each where it is."""
    host_leaf = torch.ones(3, requires_grad=True)
    gpu_leaf = torch.ones(3, device="cuda:1", requires_grad=True)
    ((host_leaf.cuda() * 2).sum() + (gpu_leaf.cpu() * 3).sum()).backward()
    assert host_leaf.grad.device.type == "cpu" and host_leaf.grad.tolist() == [2.0] * 3
    assert gpu_leaf.grad.device == torch.device("cuda:1") and gpu_leaf.grad.tolist() == [3.0] * 3
    torch.optim.SGD([host_leaf, gpu_leaf], lr=0.1).step()


def test_a_cuda_generator_samples_on_its_gpu_and_nowhere_else(gpus):
    """As on an H200: ``torch.Generator(device="cuda")`` says ``cuda``, seeds reproduce its
    samples on the GPU, and a host sample with it is refused (issue 35, item 4)."""
    generator = torch.Generator(device="cuda")
    assert generator.device == torch.device("cuda") and isinstance(generator, torch.Generator)
    first = torch.randn(3, device="cuda", generator=generator.manual_seed(0))
    again = torch.randn(3, device="cuda", generator=generator.manual_seed(0))
    assert first.device.type == "cuda" and torch.equal(first.cpu(), again.cpu())
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but"):
        torch.randn(3, generator=generator)
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but"):
        torch.randn(3, device="cuda", generator=torch.Generator())
    assert torch.cuda.default_generators[1].device == torch.device("cuda:1")
    state = torch.cuda.get_rng_state(1)
    assert state.device.type == "cpu" and state.dtype == torch.uint8
    torch.cuda.set_rng_state(state, 1)


def test_seeding_cuda_waits_for_cuda_and_never_fails():
    """torch queues ``torch.cuda.manual_seed`` and kin until CUDA is initialised, so they pass
    on a machine without GPUs (llama2.c's sample.py seeds CUDA on every machine)."""
    with emulated(0):
        torch.cuda.manual_seed(0)
        torch.cuda.manual_seed_all(0)
        torch.cuda.seed()
        torch.cuda.seed_all()
        with pytest.raises(RuntimeError, match="No CUDA GPUs are available"):
            torch.cuda.get_rng_state()


def test_a_device_pickles_and_a_lazy_module_moves_before_its_first_call(gpus):
    """As on an H200 (issue 35, items 3 and 5)."""
    import pickle

    assert pickle.loads(pickle.dumps(torch.device("cuda", 1))) == torch.device("cuda:1")
    buffer = io.BytesIO()
    torch.save({"device": torch.device("cuda")}, buffer)
    buffer.seek(0)
    assert torch.load(buffer, weights_only=False)["device"] == torch.device("cuda")
    lazy = nn.LazyLinear(3).cuda()
    assert lazy(torch.ones(2, 4, device="cuda")).device.type == "cuda"
    assert lazy.weight.device.type == "cuda"


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


@pytest.mark.parametrize("nvml_check", ["", "1"])
def test_asking_is_available_before_the_workers_fork_poisons_them(gpus, monkeypatch, nvml_check):
    """``torch.cuda.is_available()`` asks the CUDA runtime, which initialises the driver: a
    forked worker cannot use CUDA (seen on an H200), unless the NVML check is asked for."""
    from torch.utils.data import DataLoader

    monkeypatch.setenv("PYTORCH_NVML_BASED_CUDA_CHECK", nvml_check)
    assert torch.cuda.is_available()
    loader = DataLoader(
        [torch.ones(2)] * 4,
        batch_size=2,
        num_workers=1,
        multiprocessing_context="fork",
        collate_fn=lambda samples: torch.stack(samples).to("cuda").device.type,
    )
    if nvml_check:
        assert next(iter(loader)) == "cuda"
    else:
        with pytest.raises(RuntimeError, match="Cannot re-initialize CUDA in forked subprocess"):
            next(iter(loader))


def test_a_forked_child_fails_in_the_runtime_on_device_memory_its_parent_made(gpus):
    """Seen on an H200: new device memory fails in PyTorch's lazy init (RuntimeError), memory the
    parent made fails in the CUDA runtime (AcceleratorError, a RuntimeError)."""
    from torch.utils.data import DataLoader

    inherited = torch.ones(4, device="cuda")

    def touch(samples):
        outcomes = []
        for run in (lambda: inherited + 1, lambda: torch.ones(1).cuda()):
            try:
                run()
            except RuntimeError as error:
                outcomes.append((type(error).__name__, str(error).splitlines()[0]))
        return outcomes

    loader = DataLoader([0], num_workers=1, multiprocessing_context="fork", collate_fn=touch)
    runtime_error = getattr(torch, "AcceleratorError", RuntimeError).__name__
    assert next(iter(loader)) == [
        (runtime_error, "CUDA error: initialization error"),
        ("RuntimeError", FORKED_AFTER_INIT),
    ]


# moving modules: PyTorch's Module._apply and Tensor.to ---------------------------------


class TiedLM(nn.Module):
    """GPT-2's weight tying: the output layer's weight *is* the token embedding's."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(10, 4)
        self.lm_head = nn.Linear(4, 10, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, ids):
        return self.lm_head(self.wte(ids))


def test_a_module_moved_twice_keeps_its_parameter_objects(gpus):
    """PyTorch: ``Tensor.to`` returns ``self`` when device and dtype already match, and
    ``Module._apply`` assigns ``param.data`` (the same ``Parameter`` object survives);
    ``Module.to`` calls ``t.to(device, None, non_blocking)`` for each tensor."""
    model = nn.Linear(2, 2)
    weight = model.weight
    model.to("cuda")
    model.to("cuda")
    model.cuda()
    assert model.weight is weight and weight.device == torch.device("cuda:0")
    assert isinstance(weight, nn.Parameter) and weight.requires_grad
    x = torch.ones(2, device="cuda")
    assert x.to("cuda", None, False) is x and x.to(torch.float32) is x
    assert x.to("cuda", copy=True) is not x


def test_swapping_module_parameters_on_conversion_also_moves_twice(gpus):
    """PyTorch: with ``set_swap_module_params_on_conversion(True)`` ``Module._apply`` swaps
    each parameter's contents in place (``torch.utils.swap_tensors``): same object."""
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        model = nn.Linear(2, 2)
        weight = model.weight
        model.to("cuda").to("cuda")
        assert model.weight is weight and weight.device.type == "cuda"
    finally:
        torch.__future__.set_swap_module_params_on_conversion(False)


def test_tied_weights_stay_tied_across_moves_and_training(gpus):
    """PyTorch: ``Module._apply`` meets the shared ``Parameter`` twice and keeps it one object,
    so ``model.lm_head.weight is model.wte.weight`` holds after ``.to('cuda')`` and after
    ``cuda:0`` -> ``cuda:1``; ``parameters()`` yields it once."""
    model = TiedLM().to("cuda")
    assert model.lm_head.weight is model.wte.weight
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)
    assert len(list(model.parameters())) == 1
    ids = torch.tensor([[1, 2, 3]], device="cuda")
    for _ in range(2):
        model(ids).sum().backward()
        optimizer.step()
    model.to("cuda:1")
    weight = model.wte.weight
    assert model.lm_head.weight is weight and weight.device == torch.device("cuda:1")
    assert isinstance(weight, nn.Parameter) and weight.requires_grad
    assert weight.grad.device == torch.device("cuda:1")
    assert model(ids.to("cuda:1")).device == torch.device("cuda:1")


def test_a_gradient_moves_with_its_parameter_and_survives_a_no_op_move(gpus):
    """PyTorch: ``Module._apply`` converts ``param.grad`` too (``grad.data = fn(grad)``)."""
    model = nn.Linear(2, 2).cuda()
    model(torch.ones(1, 2, device="cuda")).sum().backward()
    grad = model.weight.grad
    model.to("cuda")
    assert model.weight.grad is grad
    model.to("cuda:1")
    assert model.weight.grad.device == torch.device("cuda:1")
    model.cpu()
    assert model.weight.grad.device.type == "cpu" and model.weight.grad.tolist() == grad.tolist()


def test_state_dicts_load_across_devices_into_the_parameters_own_device(gpus):
    """PyTorch: ``load_state_dict`` copies into the existing parameters (``param.copy_``), so
    they stay where they are; ``Optimizer.load_state_dict`` casts its state to each parameter's
    device, except a non-capturable ``step``, which stays on the CPU."""
    source = nn.Linear(2, 2).cuda()
    optimizer = torch.optim.Adam(source.parameters())
    source(torch.ones(1, 2, device="cuda")).sum().backward()
    optimizer.step()
    on_cpu = nn.Linear(2, 2)
    on_cpu.load_state_dict(source.state_dict())
    assert on_cpu.weight.device.type == "cpu" and torch.equal(on_cpu.weight, source.weight.cpu())
    on_gpu1 = nn.Linear(2, 2).to("cuda:1")
    on_gpu1.load_state_dict(on_cpu.state_dict())
    assert on_gpu1.weight.device == torch.device("cuda:1")
    resumed = torch.optim.Adam(on_gpu1.parameters())
    resumed.load_state_dict(optimizer.state_dict())
    state = resumed.state[on_gpu1.weight]
    assert state["exp_avg"].device == torch.device("cuda:1") and state["step"].device.type == "cpu"
    buffer = io.BytesIO()
    torch.save(TiedLM().cuda().state_dict(), buffer)
    buffer.seek(0)
    restored = TiedLM()
    restored.load_state_dict(torch.load(buffer, map_location="cpu"))
    assert restored.to("cuda:1").lm_head.weight is restored.wte.weight


def test_an_nccl_process_group_runs_on_gloo(gpus):
    """A CPU build has no NCCL (``Distributed package doesn't have NCCL built in``); the
    emulated tensors are CPU tensors underneath, so gloo runs the program's collectives."""
    import torch.distributed as dist

    assert dist.is_nccl_available()
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    try:
        assert dist.get_backend() == "gloo"
        model = nn.parallel.DistributedDataParallel(nn.Linear(2, 1).to("cuda:1"), device_ids=[1])
        model(torch.ones(3, 2)).sum().backward()
        assert model.module.weight.grad.device == torch.device("cuda:1")
        total = torch.ones(2, device="cuda:1")
        dist.all_reduce(total)
        assert total.device == torch.device("cuda:1") and total.tolist() == [1.0, 1.0]
        group = dist.new_group([0], backend="cuda:nccl,cpu:gloo")
        assert dist.get_backend(group) == "gloo"
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize(
    ("backend", "fails"),
    [("nccl", True), (None, False), ("gloo", False), ("cuda:nccl,cpu:gloo", False)],
)
def test_a_cpu_tensor_fails_in_a_collective_only_where_the_group_has_nccl_alone(
    gpus, backend, fails
):
    """NCCL has no CPU backend (``ProcessGroup::getBackend``); a group made without a backend
    pairs gloo with NCCL (PyTorch 2), and gloo moves CPU tensors."""
    import torch.distributed as dist

    dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
    try:
        on_gpu = torch.ones(2, device="cuda:0")
        dist.all_reduce(on_gpu)
        on_cpu = torch.ones(2)
        if fails:
            with pytest.raises(
                RuntimeError, match="No backend type associated with device type cpu"
            ):
                dist.all_reduce(on_cpu)
            with pytest.raises(
                RuntimeError, match="No backend type associated with device type cpu"
            ):
                dist.all_gather([torch.zeros(2)], on_cpu)
            assert len(gpus.state.recorder.device_errors) == 2
            gloo = dist.new_group([0], backend="gloo")
            dist.all_reduce(on_cpu, group=gloo)
        else:
            dist.all_reduce(on_cpu)
            assert not gpus.state.recorder.device_errors
        assert on_cpu.tolist() == [1.0, 1.0] and on_gpu.tolist() == [1.0, 1.0]
    finally:
        dist.destroy_process_group()
