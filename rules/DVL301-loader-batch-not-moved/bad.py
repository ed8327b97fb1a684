"""A training loop moves the inputs of each DataLoader batch to `device` but forgets the targets.

On CUDA: RuntimeError: Expected all tensors to be on the same device (cuda:0 and cpu), in the loss.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

features = torch.randn(64, 10)
labels = (features[:, 0] > 0).long()
loader = DataLoader(TensorDataset(features, labels), batch_size=16, shuffle=True)

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(3):
    for inputs, targets in loader:
        inputs = inputs.to(device)
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)  # expect: DVL301@41
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
