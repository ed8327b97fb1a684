"""Dict batches from a DataLoader are moved to `device` by a helper in the same file before
they reach the model and the loss.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class Points(Dataset):
    def __init__(self, size: int) -> None:
        self.features = torch.randn(size, 8)
        self.labels = self.features[:, :3].argmax(dim=1)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return {"features": self.features[index], "label": self.labels[index]}


def to_device(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {name: tensor.to(device) for name, tensor in batch.items()}


model = nn.Linear(8, 3).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
loader = DataLoader(Points(48), batch_size=16, shuffle=True)

for epoch in range(3):
    for batch in loader:
        batch = to_device(batch, device)
        optimizer.zero_grad()
        loss = criterion(model(batch["features"]), batch["label"])
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
