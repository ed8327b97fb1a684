"""An image classifier is always wrapped in nn.DataParallel (on a CPU-only machine the wrapper
just calls it). The training script uses what the wrapper itself has (parameters(), train(),
eval(), state_dict(), device_ids) and reaches the classifier's own attributes through `.module`.
"""

import os
import tempfile

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class SmallConvNet(nn.Module):
    def __init__(self, num_classes: int) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(8 * 4 * 4, num_classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(images).flatten(1))

    def freeze_features(self) -> None:
        self.features.requires_grad_(False)


model = nn.DataParallel(SmallConvNet(num_classes=3).to(device))
model.module.freeze_features()
trainable = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.SGD(trainable, lr=0.1)
criterion = nn.CrossEntropyLoss()

images = torch.randn(32, 1, 8, 8)  # DataParallel scatters CPU inputs itself
labels = torch.randint(0, model.module.num_classes, (32,), device=device)
model.train()
for step in range(10):
    optimizer.zero_grad()
    loss = criterion(model(images), labels)
    loss.backward()
    optimizer.step()

model.eval()
with tempfile.TemporaryDirectory() as workdir:
    path = os.path.join(workdir, "classifier.pt")
    torch.save(model.module.state_dict(), path)
    print(f"loss {loss.item():.4f}, saved {len(model.module.state_dict())} tensors, "
          f"replicas on {model.device_ids or 'the CPU'}")
