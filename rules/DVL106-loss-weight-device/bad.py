"""An imbalanced classifier weights its loss by inverse class frequency, computed on the CPU;
the criterion is never moved, so its weight buffer stays there.

On CUDA: RuntimeError: Expected all tensors to be on the same device (weight of nll_loss_forward).
"""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

features = torch.randn(200, 8)
labels = (features[:, 0] > 0.8).long() + (features[:, 1] > 1.2).long()  # rare classes 1 and 2
counts = torch.bincount(labels, minlength=3).float()
class_weights = counts.sum() / (3 * counts.clamp(min=1))

model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3)).to(device)
criterion = nn.CrossEntropyLoss(weight=class_weights)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
inputs, targets = features.to(device), labels.to(device)

for step in range(30):
    # CUDA: "Expected all tensors to be on the same device, but found at least two devices, cuda:0
    # and cpu! (when checking argument for argument weight in method
    # wrapper_CUDA_nll_loss_forward)" (recent releases: "... but got weight is on cpu, different
    # from other tensors on cuda:0 ...").
    loss = criterion(model(inputs), targets)  # expect: DVL106
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"weights {[round(w, 2) for w in class_weights.tolist()]}, loss {loss.item():.4f}")
