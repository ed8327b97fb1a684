"""A small GPT whose output layer shares the token embedding (as GPT-2 and nanoGPT do).

It trains two steps on whatever device there is; moving it twice keeps the weights tied.
"""

import torch
from torch import nn
from torch.nn import functional as F


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)
        )

    def forward(self, x):
        length = x.size(1)
        mask = torch.triu(torch.ones(length, length, dtype=torch.bool, device=x.device), 1)
        h = self.norm1(x)
        x = x + self.attention(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class GPT(nn.Module):
    def __init__(self, vocab=32, width=16, length=8, layers=2, heads=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(length, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # weight tying

    def forward(self, ids, targets=None):
        positions = torch.arange(ids.size(1), device=ids.device)
        x = self.wte(ids) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.norm(x))
        loss = None if targets is None else F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss


device = "cuda" if torch.cuda.is_available() else "cpu"
model = GPT()
model.to(device)
assert model.lm_head.weight is model.wte.weight
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = torch.randint(0, 32, (4, 9), device=device)
for step in range(2):
    _, loss = model(data[:, :-1], data[:, 1:])
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.3f}")
model.to(device)  # moving again is a no-op
assert model.lm_head.weight is model.wte.weight
