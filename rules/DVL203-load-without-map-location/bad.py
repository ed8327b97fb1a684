"""Trains a classifier on `device` and saves it; the same script, re-run with no GPU visible
(CUDA_VISIBLE_DEVICES=""), serves it with `torch.load` without `map_location`.

On CUDA: the serving process fails with RuntimeError: Attempting to deserialize object on a CUDA
device but torch.cuda.is_available() is False.
"""

import os
import subprocess
import sys
import tempfile

import torch
from torch import nn

SERVE_FROM = "DEVLINT_SERVE_CHECKPOINT"  # set when the script runs as the CPU-only server


def build_model() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))


def train_and_save(path: str) -> None:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = build_model().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    inputs = torch.randn(64, 4, device=device)
    targets = (inputs[:, 0] > 0).long()
    for _ in range(30):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
    torch.save(model.state_dict(), path)
    print(f"trained on {device}: loss {loss.item():.4f}")


def serve(path: str) -> None:
    model = build_model()
    model.load_state_dict(torch.load(path))  # expect: DVL203@27
    model.eval()
    requests = torch.tensor([[2.0, 0.0, 0.0, 0.0], [-2.0, 0.0, 0.0, 0.0]])
    with torch.no_grad():
        predictions = model(requests).argmax(dim=1)
    print(f"served without a GPU: predictions {predictions.tolist()}")


if __name__ == "__main__":
    if SERVE_FROM in os.environ:
        serve(os.environ[SERVE_FROM])
        sys.exit(0)
    with tempfile.TemporaryDirectory() as workdir:
        checkpoint = os.path.join(workdir, "classifier.pt")
        train_and_save(checkpoint)
        # Deploy to a machine without a GPU: this script again, with no CUDA device visible.
        cpu_only = {**os.environ, "CUDA_VISIBLE_DEVICES": "", SERVE_FROM: checkpoint}
        server = subprocess.run([sys.executable, os.path.abspath(__file__)], env=cpu_only)
    sys.exit(server.returncode)
