"""Next-token sampling on `device`: `gather`, `scatter_` and an `nn.Embedding` get indices that live
next to the tensors they index, and advanced indexing takes a CPU index tensor (PyTorch moves it).
"""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

vocab, dim, batch = 50, 16, 4
embedding = nn.Embedding(vocab, dim).to(device)
head = nn.Linear(dim, vocab).to(device)

tokens = torch.randint(0, vocab, (batch, 6), device=device)
logits = head(embedding(tokens)).mean(dim=1)
log_probs = logits.log_softmax(dim=-1)

targets = torch.tensor([1, 7, 7, 30], device=device)
target_log_probs = log_probs.gather(1, targets.unsqueeze(1)).squeeze(1)

banned = torch.tensor([0, 1, 2])  # CPU index tensor: advanced indexing accepts it
logits[:, banned] = float("-inf")
next_tokens = logits.argmax(dim=-1)
chosen = torch.zeros_like(logits).scatter_(1, next_tokens.unsqueeze(1), 1.0)
print(f"nll {-target_log_probs.mean().item():.3f}, next {next_tokens.tolist()}, "
      f"{int(chosen.sum().item())} chosen on {chosen.device}")
