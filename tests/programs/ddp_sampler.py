"""DistributedDataParallel with a DistributedSampler, started with ``torch.multiprocessing.spawn``.

Another common form: ``init_method="tcp://..."`` and ``device_id=``, ``model.to(rank)``,
pinned batches moved with ``non_blocking=True``, BatchNorm buffers, and a checkpoint
saved by rank 0 and loaded by every rank with ``map_location``.
"""

import os
import socket
import tempfile
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def worker(rank, world_size, address, checkpoint):
    torch.cuda.set_device(rank)
    dist.init_process_group(
        backend="nccl",
        init_method=address,
        rank=rank,
        world_size=world_size,
        timeout=timedelta(seconds=60),
        device_id=torch.device("cuda", rank),
    )
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
    model = DDP(model.to(rank), device_ids=[rank], output_device=rank)
    data = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
    sampler = DistributedSampler(data, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(data, batch_size=4, sampler=sampler, pin_memory=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for inputs, targets in loader:
            inputs, targets = inputs.cuda(non_blocking=True), targets.cuda(non_blocking=True)
            loss = nn.functional.mse_loss(model(inputs), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if rank == 0:
        torch.save(model.module.state_dict(), checkpoint)
    dist.barrier()
    state = torch.load(checkpoint, map_location={"cuda:0": f"cuda:{rank}"})
    model.module.load_state_dict(state)
    assert state["0.weight"].device == torch.device("cuda", rank)
    dist.destroy_process_group()


def free_address():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{listener.getsockname()[1]}"


if __name__ == "__main__":
    world_size = torch.cuda.device_count()
    with tempfile.TemporaryDirectory() as folder:
        checkpoint = os.path.join(folder, "model.pt")
        mp.spawn(worker, args=(world_size, free_address(), checkpoint), nprocs=world_size)
