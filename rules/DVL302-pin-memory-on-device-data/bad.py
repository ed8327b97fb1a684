"""A dataset preloaded onto `device` is read by a DataLoader that still asks for `pin_memory=True`.

On CUDA: RuntimeError: cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned
(seen on an H200 with torch 2.11), raised when the first batch is pinned.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

features = torch.randn(256, 10)
labels = (features[:, :2].sum(dim=1) > 0).long()
dataset = TensorDataset(features.to(device), labels.to(device))  # small enough to live on the GPU
loader = DataLoader(dataset, batch_size=32, shuffle=True, pin_memory=True)  # expect: DVL302@10

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(3):
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
