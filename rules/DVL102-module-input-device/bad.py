"""A classifier moved to `device` is called with samples that were built on the CPU.

On CUDA: RuntimeError: Expected all tensors to be on the same device (cuda:0 and cpu).
"""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, in_features: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


model = Classifier(10, 32, 3)
model.to(device)
model.eval()

samples = torch.randn(5, 10)
with torch.no_grad():
    logits = model(samples)  # expect: DVL102@14
predictions = logits.argmax(dim=-1)
print(f"predicted classes {predictions.tolist()} on {logits.device}")
