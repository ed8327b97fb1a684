"""Data-parallel training that keeps the primary copy of the model on GPU 1 (GPU 0 also serves
an evaluation job): `device_ids=[1, 0]`, so DataParallel gathers the outputs on cuda:1, but the
labels are moved with `.cuda()`, to the current device, cuda:0.

Needs 2 GPUs: with fewer the script trains on one device without DataParallel. On 2 GPUs:
RuntimeError: Expected all tensors to be on the same device, but found at least two devices,
cuda:1 and cuda:0!
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


def make_classifier() -> nn.Module:
    return nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3))


def train_data_parallel(loader: DataLoader, epochs: int) -> nn.Module:
    model = nn.DataParallel(make_classifier().to("cuda:1"), device_ids=[1, 0])
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for inputs, labels in loader:
            optimizer.zero_grad()
            loss = criterion(model(inputs), labels.cuda())  # expect: DVL405@20
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")
    return model.module


def train_single_device(loader: DataLoader, epochs: int) -> nn.Module:
    model = make_classifier().to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for inputs, labels in loader:
            optimizer.zero_grad()
            loss = criterion(model(inputs.to(device)), labels.to(device))
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")
    return model


features = torch.randn(240, 12)
labels = features[:, :3].argmax(dim=1)
loader = DataLoader(TensorDataset(features, labels), batch_size=48, shuffle=True)
if torch.cuda.device_count() > 1:
    classifier = train_data_parallel(loader, epochs=3)
else:
    classifier = train_single_device(loader, epochs=3)
