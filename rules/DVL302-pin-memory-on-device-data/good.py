"""The normal use of `pin_memory=True`: a dataset of CPU tensors is pinned by the DataLoader and
each batch is copied to `device` with `non_blocking=True`.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class Waveforms(Dataset):
    def __init__(self, size: int, length: int) -> None:
        self.frequencies = torch.randint(1, 4, (size,))
        self.time = torch.linspace(0, 1, length)

    def __len__(self) -> int:
        return len(self.frequencies)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        frequency = self.frequencies[index]
        wave = torch.sin(2 * torch.pi * frequency * self.time)
        return wave + 0.1 * torch.randn_like(wave), frequency - 1


loader = DataLoader(Waveforms(96, 32), batch_size=16, shuffle=True, pin_memory=True)
model = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 3)).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(3):
    for waves, classes in loader:
        waves = waves.to(device, non_blocking=True)
        classes = classes.to(device, non_blocking=True)
        optimizer.zero_grad()
        loss = criterion(model(waves), classes)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
