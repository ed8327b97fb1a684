"""A regression model trained on `device`: its inputs, targets and weighted loss share that
device, and parameter-free layers and losses (ReLU, MSELoss) simply follow their inputs.
"""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1)).to(device)
rectify = nn.ReLU()  # no parameters or buffers: no device of its own
criterion = nn.MSELoss()  # likewise
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

inputs = torch.randn(64, 4, device=device)
targets = rectify(inputs.sum(dim=1, keepdim=True))
for _ in range(20):
    optimizer.zero_grad()
    loss = criterion(model(inputs), targets)
    loss.backward()
    optimizer.step()

# A loss with a weight has a buffer: move the module with the model.
imbalance = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0])).to(device)
positive = (targets > 0.5).float()
bce = imbalance(model(inputs), positive)
print(f"mse {loss.item():.4f}, weighted bce {bce.item():.4f} on {loss.device}")
