"""Single-node multi-GPU training with DistributedDataParallel, one process per GPU: launch it
with `torchrun --nproc_per_node=<GPUs> fixed.py`; run with plain `python` it is a single process
(world size 1), on the GPU with NCCL or on the CPU with gloo. Each process selects its GPU,
trains its DistributedSampler shard and moves its batches to its device.
"""

import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

local_rank = int(os.environ.get("LOCAL_RANK", "0"))
use_cuda = torch.cuda.is_available() and dist.is_nccl_available()
if use_cuda:
    torch.cuda.set_device(local_rank)
device = torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")
torch.manual_seed(0)

with tempfile.TemporaryDirectory() as workdir:
    init_method = "env://" if "MASTER_ADDR" in os.environ else f"file://{workdir}/rendezvous"
    dist.init_process_group(
        "nccl" if use_cuda else "gloo",
        init_method=init_method,
        rank=int(os.environ.get("RANK", "0")),
        world_size=int(os.environ.get("WORLD_SIZE", "1")),
    )
    features = torch.randn(256, 10)
    labels = (features[:, 0] * features[:, 1] > 0).long()
    dataset = TensorDataset(features, labels)
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)

    classifier = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
    model = DDP(classifier, device_ids=[local_rank] if use_cuda else None)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for inputs, targets in loader:
            optimizer.zero_grad()
            loss = criterion(model(inputs.to(device)), targets.to(device))
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")
    dist.destroy_process_group()
