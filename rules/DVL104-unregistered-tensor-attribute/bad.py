"""A causal self-attention block keeps its mask as a plain tensor attribute, which
`model.to(device)` does not move.

On CUDA: RuntimeError: Expected all tensors to be on the same device (cuda:0 and cpu), in forward.
"""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, max_len: int) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.mask = torch.full((max_len, max_len), float("-inf")).triu(diagonal=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        seq_len, dim = x.size(1), x.size(2)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / dim**0.5
        scores = scores + self.mask[:seq_len, :seq_len]  # expect: DVL104
        return self.proj(scores.softmax(dim=-1) @ v)


model = CausalSelfAttention(dim=16, max_len=32)
model.to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(4, 10, 16, device=device)
target = torch.randn(4, 10, 16, device=device)

for step in range(20):
    loss = nn.functional.mse_loss(model(x), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f} on {x.device}")
