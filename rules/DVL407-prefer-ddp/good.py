"""A training script that mentions nn.DataParallel without creating one: it trains with
DistributedDataParallel, as a single process here (world size 1), and its logging helper checks
`isinstance(model, nn.DataParallel)` to say how the model is parallelised.
"""

import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

torch.manual_seed(0)


def parallelism(model: nn.Module) -> str:
    """How `model` is parallelised, for the log."""
    if isinstance(model, nn.DataParallel):
        return "DataParallel (single process)"
    if isinstance(model, DDP):
        return f"DistributedDataParallel ({dist.get_world_size()} process(es))"
    return "none"


use_cuda = torch.cuda.is_available() and dist.is_nccl_available()
device = torch.device("cuda", 0) if use_cuda else torch.device("cpu")
with tempfile.TemporaryDirectory() as workdir:
    dist.init_process_group(
        "nccl" if use_cuda else "gloo",
        init_method=f"file://{os.path.join(workdir, 'rendezvous')}",
        rank=0,
        world_size=1,
    )
    model = DDP(nn.Linear(4, 1).to(device), device_ids=[0] if use_cuda else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs = torch.randn(64, 4, device=device)
    targets = inputs @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]], device=device)
    for step in range(50):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()

    path = os.path.join(workdir, "linear.pt")
    torch.save(model.module.state_dict(), path)
    restored = nn.Linear(4, 1)
    restored.load_state_dict(torch.load(path, map_location="cpu"))
    print(f"parallelism: {parallelism(model)}, loss {loss.item():.4f}, "
          f"restored weights {restored.weight.data.flatten().tolist()}")
    dist.destroy_process_group()
