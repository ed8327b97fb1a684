"""Distributed evaluation, run here as a single process (world size 1): each rank counts its
correct predictions on its GPU and creates its sample count on the same device, so both
tensors can be all-reduced over NCCL (or over gloo on a CPU-only machine).
"""

import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn

torch.manual_seed(0)


def evaluate(workdir: str) -> float:
    use_cuda = torch.cuda.is_available() and dist.is_nccl_available()
    init_method = f"file://{os.path.join(workdir, 'rendezvous')}"
    dist.init_process_group(
        "nccl" if use_cuda else "gloo", init_method=init_method, rank=0, world_size=1
    )
    device = torch.device("cuda", 0) if use_cuda else torch.device("cpu")
    model = nn.Linear(6, 3).to(device)
    features = torch.randn(50, 6, device=device)
    labels = features[:, :3].argmax(dim=1)
    with torch.no_grad():
        correct = (model(features).argmax(dim=1) == labels).sum()
    total = torch.tensor(len(labels), device=device)
    dist.all_reduce(correct)
    dist.all_reduce(total)
    dist.destroy_process_group()
    return correct.item() / total.item()


with tempfile.TemporaryDirectory() as workdir:
    print(f"accuracy {evaluate(workdir):.2f}")
