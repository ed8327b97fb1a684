"""Worker processes only build CPU batches (a padding `collate_fn`); the main process moves them to
`device`. A small validation set lives on the GPU and is read without workers (`num_workers=0`).
"""

import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def pad_batch(samples: list[tuple[torch.Tensor, int]]) -> tuple[torch.Tensor, torch.Tensor]:
    sequences = pad_sequence([sequence for sequence, _ in samples], batch_first=True)
    labels = torch.tensor([label for _, label in samples])
    return sequences, labels


class BagOfTokens(nn.Module):
    def __init__(self, vocab: int, classes: int) -> None:
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, 16, mode="mean", padding_idx=0)
        self.head = nn.Linear(16, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(tokens))


def main() -> None:
    generator = torch.Generator().manual_seed(0)
    lengths = torch.randint(3, 12, (48,), generator=generator).tolist()
    sequences = [torch.randint(1, 30, (n,), generator=generator) for n in lengths]
    train = [(sequence, int(sequence[0]) % 2) for sequence in sequences]
    loader = DataLoader(train, batch_size=8, shuffle=True, collate_fn=pad_batch, num_workers=2)

    held_out = torch.randint(1, 30, (16, 10), generator=generator)
    validation = TensorDataset(held_out.to(device), (held_out[:, 0] % 2).to(device))
    validation_loader = DataLoader(validation, batch_size=8, num_workers=0)

    torch.manual_seed(0)
    model = BagOfTokens(30, 2).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(2):
        for tokens, labels in loader:
            tokens, labels = tokens.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(tokens), labels)
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            correct = sum((model(x).argmax(1) == y).sum().item() for x, y in validation_loader)
        print(f"epoch {epoch}: loss {loss.item():.4f}, validation accuracy {correct / 16:.2f}")


if __name__ == "__main__":
    main()
