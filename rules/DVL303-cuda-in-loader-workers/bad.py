"""A dataset moves each sample to `device` in `__getitem__` to augment it there, and is read by
two DataLoader workers forked after the model has initialised CUDA in the main process.

On CUDA (Linux, fork start method): RuntimeError: Caught RuntimeError in DataLoader worker
process 0 ... Cannot re-initialize CUDA in forked subprocess.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class NoisyDigits(Dataset):
    def __init__(self, size: int) -> None:
        generator = torch.Generator().manual_seed(0)
        self.images = torch.rand(size, 1, 8, 8, generator=generator)
        self.labels = torch.randint(0, 10, (size,), generator=generator)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        image = self.images[index].to(device)
        image = (image + 0.1 * torch.randn_like(image)).clamp(0, 1)
        return image, self.labels[index].to(device)


def main() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    dataset = NoisyDigits(64)
    loader = DataLoader(dataset, batch_size=16, shuffle=True, num_workers=2)  # expect: DVL303@14
    for epoch in range(2):
        for images, labels in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
