"""Moving a model and its data: a bare `model.to(device)` moves a module in place, while
tensors are rebound to (or passed on as) the result of `.to()`, `.cuda()` or `.cpu()`.
"""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 2))
model.to(device)  # modules move in place

inputs = torch.randn(10, 6)
inputs = inputs.to(device)
targets = torch.randint(0, 2, (10,)).to(device, non_blocking=True)
loss = nn.functional.cross_entropy(model(inputs), targets)
loss.backward()

grad_norms = [p.grad.norm().cpu() for p in model.parameters()]
print(f"loss {loss.item():.3f}, gradient norms {[round(g.item(), 3) for g in grad_norms]}")
