"""A Trainer that wraps its model in nn.DataParallel first and moves the wrapper afterwards:
moving the wrapper moves the wrapped model, so its parameters are on `device` (cuda:0,
device_ids[0]) before the first forward pass. CPU batches are scattered by DataParallel.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class Trainer:
    def __init__(self, model: nn.Module, device: torch.device) -> None:
        self.device = device
        self.model = nn.DataParallel(model).to(device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.criterion = nn.CrossEntropyLoss()

    def fit(self, loader: DataLoader, epochs: int) -> float:
        self.model.train()
        for epoch in range(epochs):
            for inputs, targets in loader:
                self.optimizer.zero_grad()
                loss = self.criterion(self.model(inputs), targets.to(self.device))
                loss.backward()
                self.optimizer.step()
        return loss.item()


features = torch.randn(256, 10)
labels = (features[:, 0] > features[:, 1]).long()
loader = DataLoader(TensorDataset(features, labels), batch_size=64, shuffle=True)
trainer = Trainer(nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)), device)
print(f"final loss {trainer.fit(loader, epochs=3):.4f}")
