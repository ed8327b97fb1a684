"""A DistributedDataParallel training script, run here as a single process (world size 1):
on a GPU machine it selects the process's GPU, moves the model there and passes
`device_ids=[local_rank]`.
"""

import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

torch.manual_seed(0)


def train(workdir: str) -> float:
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    backend = "nccl" if torch.cuda.is_available() and dist.is_nccl_available() else "gloo"
    init_method = f"file://{os.path.join(workdir, 'rendezvous')}"
    dist.init_process_group(backend, init_method=init_method, rank=0, world_size=1)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        ddp_model = DDP(model.to(local_rank), device_ids=[local_rank])
    else:
        ddp_model = DDP(model)
    inputs = torch.randn(64, 6)  # with device_ids, DDP copies its inputs to device_ids[0]
    targets = inputs.sum(dim=1, keepdim=True)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.05)
    for step in range(20):
        optimizer.zero_grad()
        outputs = ddp_model(inputs)
        loss = nn.functional.mse_loss(outputs, targets.to(outputs.device))
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()
    return loss.item()


with tempfile.TemporaryDirectory() as workdir:
    print(f"final loss {train(workdir):.4f}")
