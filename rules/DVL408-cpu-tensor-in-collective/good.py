"""Distributed training bookkeeping, run here as a single process (world size 1): the loss is
reduced over the default group on each rank's device, while step counters stay on the CPU and
are reduced over a separate gloo group created for them, which moves CPU tensors.
"""

import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn

torch.manual_seed(0)


def train(workdir: str) -> tuple[float, int]:
    use_cuda = torch.cuda.is_available() and dist.is_nccl_available()
    init_method = f"file://{os.path.join(workdir, 'rendezvous')}"
    dist.init_process_group(
        "nccl" if use_cuda else "gloo", init_method=init_method, rank=0, world_size=1
    )
    cpu_group = dist.new_group(backend="gloo")
    device = torch.device("cuda", 0) if use_cuda else torch.device("cpu")
    model = nn.Linear(6, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    inputs = torch.randn(64, 6, device=device)
    targets = inputs.sum(dim=1, keepdim=True)
    steps = torch.zeros((), dtype=torch.int64)
    for _ in range(20):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        steps += 1
    reduced = loss.detach().clone()
    dist.all_reduce(reduced)
    dist.all_reduce(steps, group=cpu_group)
    dist.destroy_process_group()
    return reduced.item(), int(steps)


with tempfile.TemporaryDirectory() as workdir:
    loss, steps = train(workdir)
    print(f"loss {loss:.4f} after {steps} steps")
