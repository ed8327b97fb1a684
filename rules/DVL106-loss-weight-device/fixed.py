"""An imbalanced classifier weights its loss by inverse class frequency; the criterion is moved
with the model, which moves its weight buffer.
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
criterion = nn.CrossEntropyLoss(weight=class_weights).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
inputs, targets = features.to(device), labels.to(device)

for step in range(30):
    loss = criterion(model(inputs), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"weights {[round(w, 2) for w in class_weights.tolist()]}, loss {loss.item():.4f}")
