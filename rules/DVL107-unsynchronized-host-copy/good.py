"""Batched inference on `device`: inputs go up with non-blocking host-to-device copies from pinned
memory (safe: later GPU work is ordered after them), predictions come back with a blocking `.cpu()`.
"""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
model.eval()
batches = [torch.randn(32, 16) for _ in range(5)]
if device.type == "cuda":
    batches = [batch.pin_memory() for batch in batches]

counts = torch.zeros(4, dtype=torch.long)
with torch.no_grad():
    for batch in batches:
        inputs = batch.to(device, non_blocking=True)
        predictions = model(inputs).argmax(dim=-1).cpu()
        counts += torch.bincount(predictions, minlength=4)
print(f"predicted class counts {counts.tolist()}")
assert counts.sum().item() == 5 * 32
