"""Resumable training: checkpoints are loaded with `map_location`, so a run started on `device`
resumes in a process that sees no GPU (the script re-runs itself with CUDA_VISIBLE_DEVICES="").
"""

import io
import os
import subprocess
import sys
import tempfile

import torch
from torch import nn

RESUME_FROM = "DEVLINT_RESUME_CHECKPOINT"  # set when the script runs as the resumed job


def train(epochs: int, checkpoint_path: str, resume: bool) -> None:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    start = 0
    if resume:
        checkpoint = torch.load(checkpoint_path, map_location=device)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start = checkpoint["epoch"]
    inputs = torch.randn(32, 3, device=device)
    targets = inputs.sum(dim=1, keepdim=True)
    for _ in range(start, start + epochs):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    torch.save({**state, "epoch": start + epochs}, checkpoint_path)
    print(f"epochs {start}..{start + epochs} on {device}: loss {loss.item():.4f}")

    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    host_copy = torch.load(buffer, "cpu")  # map_location given positionally
    assert all(tensor.device.type == "cpu" for tensor in host_copy.values())


if __name__ == "__main__":
    if RESUME_FROM in os.environ:
        train(10, os.environ[RESUME_FROM], resume=True)
        sys.exit(0)
    with tempfile.TemporaryDirectory() as workdir:
        path = os.path.join(workdir, "checkpoint.pt")
        train(10, path, resume=False)
        # Resume on a machine without a GPU: this script again, with no CUDA device visible.
        cpu_only = {**os.environ, "CUDA_VISIBLE_DEVICES": "", RESUME_FROM: path}
        resumed = subprocess.run([sys.executable, os.path.abspath(__file__)], env=cpu_only)
    sys.exit(resumed.returncode)
