"""A sequence encoder wrapped in nn.DataParallel keeps its statistics the replica-safe way:
a BatchNorm layer and a registered buffer updated in place (the replica on device_ids[0]
shares them with the model), and `forward` returns what the caller needs instead of caching
it on `self`. Attributes are set in `__init__` and in a method called outside `forward`.
"""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.BatchNorm1d(dim)
        self.register_buffer("max_abs", torch.zeros(()))
        self.temperature = 1.0

    def set_temperature(self, temperature: float) -> None:
        self.temperature = temperature

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.norm(self.proj(x))
        scores = (hidden / self.temperature).softmax(dim=-1)
        if self.training:
            self.max_abs.copy_(torch.maximum(self.max_abs, hidden.detach().abs().max()))
        return hidden, scores


model = nn.DataParallel(Encoder(dim=16).to(device))
model.module.set_temperature(0.5)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    optimizer.zero_grad()
    hidden, scores = model(torch.randn(32, 16))
    loss = hidden.pow(2).mean() - scores.max(dim=-1).values.mean()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}, largest activation {model.module.max_abs.item():.2f}, "
      f"batches seen by BatchNorm {model.module.norm.num_batches_tracked.item()}")
