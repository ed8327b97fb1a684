"""The canonical DistributedDataParallel setup, run here as a single process (world size 1):
each process selects its GPU with `torch.cuda.set_device(local_rank)`, moves the model there,
passes `device_ids=[local_rank]` and moves every batch of its DistributedSampler shard to the
same device; on a CPU-only machine the same script trains on the CPU with gloo.
"""

import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

torch.manual_seed(0)


def train(workdir: str, epochs: int) -> float:
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    rank = int(os.environ.get("RANK", "0"))
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    use_cuda = torch.cuda.is_available() and dist.is_nccl_available()
    # torchrun sets MASTER_ADDR; run with plain `python`, this is a single process
    init_method = "env://" if "MASTER_ADDR" in os.environ else f"file://{workdir}/rendezvous"
    dist.init_process_group(
        "nccl" if use_cuda else "gloo", init_method=init_method, rank=rank, world_size=world_size
    )
    if use_cuda:
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")

    features = torch.randn(256, 6)
    dataset = TensorDataset(features, features.sum(dim=1, keepdim=True))
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)

    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
    ddp_model = DDP(model, device_ids=[local_rank] if use_cuda else None)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.05)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(ddp_model(inputs), targets)
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()
    return loss.item()


with tempfile.TemporaryDirectory() as workdir:
    print(f"final loss {train(workdir, epochs=2):.4f}")
