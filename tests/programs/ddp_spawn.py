"""DistributedDataParallel started with ``torch.multiprocessing.spawn``, one GPU per rank.

The form of PyTorch's DDP tutorial: NCCL, ``cuda:{rank}``, ``device_ids=[rank]``.
With ``--wrong-gpu`` every rank puts its model on ``cuda`` (GPU 0) instead: a bug.
"""

import os
import socket
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(rank, world_size, wrong_gpu):
    dist.init_process_group("nccl", rank=rank, world_size=world_size, timeout=timedelta(seconds=60))
    device = torch.device(f"cuda:{rank}")
    if wrong_gpu:
        model = DDP(nn.Linear(4, 2).to("cuda"), device_ids=[rank])
    else:
        torch.cuda.set_device(device)
        model = DDP(nn.Linear(4, 2).to(device), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        loss = model(torch.randn(8, 4, device=device)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    total = loss.detach()
    dist.all_reduce(total)
    assert total.device == device
    dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return listener.getsockname()[1]


if __name__ == "__main__":
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(free_port())
    world_size = torch.cuda.device_count()
    mp.spawn(worker, args=(world_size, "--wrong-gpu" in sys.argv), nprocs=world_size)
