"""A sentiment classifier over padded token batches: the whole batch goes to the device,
and the lengths are handed to pack_padded_sequence on the CPU, where it reads them.
"""

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Classifier(nn.Module):
    def __init__(self, vocabulary: int, width: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, width, padding_idx=0)
        self.lstm = nn.LSTM(width, width, batch_first=True)
        self.head = nn.Linear(width, 2)

    def forward(self, packed: PackedSequence) -> torch.Tensor:
        _, (hidden, _) = self.lstm(packed)
        return self.head(hidden[-1])


def batches(count: int):
    """Padded token ids (0 pads), the length of each sequence, and a label."""
    for _ in range(count):
        lengths = torch.randint(2, 9, (8,))
        tokens = torch.randint(1, 50, (8, 8)) * (torch.arange(8) < lengths[:, None])
        yield tokens, lengths, torch.randint(0, 2, (8,))


model = Classifier(vocabulary=50, width=16).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for tokens, lengths, labels in batches(3):
    tokens, lengths, labels = tokens.to(device), lengths.to(device), labels.to(device)
    embedded = model.embedding(tokens)
    packed = pack_padded_sequence(
        embedded,
        lengths.cpu(),
        batch_first=True,
        enforce_sorted=False,
    )
    loss = nn.functional.cross_entropy(model(packed), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.3f}")
