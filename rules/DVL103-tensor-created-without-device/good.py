"""A GRU language model whose helper tensors follow their inputs: the hidden state comes from
`weight.new_zeros`, positions from `torch.arange(..., device=tokens.device)`, and a CPU 0-dim
temperature may join CUDA ops.
"""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class CharModel(nn.Module):
    def __init__(self, vocab: int, dim: int, hidden: int, max_len: int) -> None:
        super().__init__()
        self.hidden_size = hidden
        self.embed = nn.Embedding(vocab, dim)
        self.position = nn.Embedding(max_len, dim)
        self.gru = nn.GRU(dim, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def init_hidden(self, batch: int) -> torch.Tensor:
        weight = next(self.parameters())
        return weight.new_zeros(1, batch, self.hidden_size)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(tokens.size(1), device=tokens.device)
        x = self.embed(tokens) + self.position(positions)
        out, _ = self.gru(x, self.init_hidden(tokens.size(0)))
        temperature = torch.tensor(0.8)  # CPU 0-dim: allowed as an input of a CUDA op
        return self.head(out) / temperature


model = CharModel(vocab=20, dim=16, hidden=32, max_len=12)
model.to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
tokens = torch.randint(0, 20, (8, 12), device=device)

for step in range(20):
    logits = model(tokens[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, 20), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f} on {logits.device}")
