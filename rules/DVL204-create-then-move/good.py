"""A tiny transformer block on `device`: masks and positions are created on the device, a lookup
table built and edited on the CPU is moved once, and NumPy data enters through `from_numpy`.
"""

import numpy as np
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

vocab, dim, seq_len = 20, 16, 8
embed = nn.Embedding(vocab, dim).to(device)
attention = nn.MultiheadAttention(dim, num_heads=2, batch_first=True).to(device)

# Built and modified on the CPU, then moved once: creating it on the device would not help.
bigram_bonus = torch.zeros(vocab, vocab)
for token in range(vocab - 1):
    bigram_bonus[token, token + 1] = 1.0
bigram_bonus = bigram_bonus.to(device)

token_ids = torch.from_numpy(np.random.default_rng(0).integers(0, vocab, (4, seq_len))).to(device)
positions = torch.arange(seq_len, device=device)
causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).triu(diagonal=1)
angles = positions.to(torch.float32).unsqueeze(1) / 10.0  # a dtype change, not a move
hidden = embed(token_ids) + torch.sin(angles)
out, weights = attention(hidden, hidden, hidden, attn_mask=causal)
bonus = bigram_bonus[token_ids[:, :-1], token_ids[:, 1:]].sum()
scale = torch.full((1,), 0.5, device=device)
print(f"out {tuple(out.shape)} on {out.device}, bonus {bonus.item():.0f}, scale {scale.item()}")
