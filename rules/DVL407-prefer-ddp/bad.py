"""Single-node multi-GPU training with nn.DataParallel. It works (on a CPU-only machine
DataParallel just calls the model), but PyTorch recommends DistributedDataParallel even on one
node: DataParallel is one process driving every GPU from threads (GIL-bound), replicates the
model on every forward pass and gathers all outputs on GPU 0.

Runs everywhere: this is a recommendation (info), not a crash; no failure is expected on GPUs.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

features = torch.randn(256, 10)
labels = (features[:, 0] * features[:, 1] > 0).long()
loader = DataLoader(TensorDataset(features, labels), batch_size=32, shuffle=True)

classifier = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
model = nn.DataParallel(classifier)  # expect: DVL407@9
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(3):
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets.to(device))
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
