"""Causal self-attention whose mask is built on the CPU while the scores live on `device`.

On CUDA: RuntimeError: Expected all tensors to be on the same device (cuda:0 and cpu).
"""

import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

batch, seq_len, dim = 2, 6, 16
x = torch.randn(batch, seq_len, dim, device=device)
w_query = torch.randn(dim, dim, device=device) / dim**0.5
w_key = torch.randn(dim, dim, device=device) / dim**0.5

scores = (x @ w_query) @ (x @ w_key).transpose(1, 2) / dim**0.5
causal_mask = torch.full((seq_len, seq_len), float("-inf")).triu(diagonal=1)
scores = scores + causal_mask  # expect: DVL101@10
attention = scores.softmax(dim=-1)
out = attention @ x
print(f"attention output {tuple(out.shape)} on {out.device}")
