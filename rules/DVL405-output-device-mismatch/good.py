"""Data-parallel training with the outputs gathered where the loss is computed: the model is on
`device` (cuda:0, device_ids[0]) and DataParallel gathers the outputs there by default, next to
the labels moved to `device`; a validation pass moves its targets to the outputs' own device.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

features = torch.randn(240, 12)
labels = features[:, :3].argmax(dim=1)
train_loader = DataLoader(TensorDataset(features[:192], labels[:192]), batch_size=48)
val_loader = DataLoader(TensorDataset(features[192:], labels[192:]), batch_size=48)

model = nn.DataParallel(nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3)).to(device))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    model.train()
    for inputs, targets in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets.to(device))
        loss.backward()
        optimizer.step()

    model.eval()
    correct = 0
    with torch.no_grad():
        for inputs, targets in val_loader:
            outputs = model(inputs)
            correct += (outputs.argmax(dim=1) == targets.to(outputs.device)).sum().item()
    print(f"epoch {epoch}: loss {loss.item():.4f}, validation accuracy {correct / 48:.2f}")
