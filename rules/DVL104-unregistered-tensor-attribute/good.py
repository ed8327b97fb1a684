"""A residual MLP keeps its blocks in an `nn.ModuleList`, its input statistics as buffers and its
output scale as a parameter, and moves a plain anchor tensor to the input's device at use.
"""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class ResidualMLP(nn.Module):
    def __init__(self, dim: int, depth: int) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU()) for _ in range(depth)
        )
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("std", torch.ones(dim))
        self.scale = nn.Parameter(torch.ones(dim))
        self.anchors = torch.linspace(-1.0, 1.0, dim)  # a plain attribute, moved where it is used

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = (x - self.mean) / self.std
        for block in self.blocks:
            x = x + block(x)
        return x * self.scale + self.anchors.to(x.device)


model = ResidualMLP(dim=16, depth=3)
model.to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(32, 16, device=device)
target = torch.randn(32, 16, device=device)

for step in range(20):
    loss = nn.functional.mse_loss(model(x), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f} on {x.device}")
