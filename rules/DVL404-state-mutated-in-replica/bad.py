"""A denoising model anneals the noise it adds to its inputs with a step counter kept as a plain
attribute and incremented in `forward`; the model is trained wrapped in nn.DataParallel.

Silent bug, needs 2 GPUs: on a CPU-only machine or a single GPU, DataParallel calls the model
itself and the counter counts. On 2 GPUs every forward pass runs on replicas that are thrown
away, the counter stays 0 and the noise never anneals. Symptom: the check at the end fails,
AssertionError: forward passes counted: 0 of 12.
"""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class AnnealedDenoiser(nn.Module):
    def __init__(self, dim: int, anneal_steps: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, dim))
        self.anneal_steps = anneal_steps
        self.steps = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        noise_scale = max(0.0, 1.0 - self.steps / self.anneal_steps)
        self.steps += 1  # expect: DVL404@9
        return self.net(x + noise_scale * torch.randn_like(x))


model = nn.DataParallel(AnnealedDenoiser(dim=8, anneal_steps=10).to(device))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
clean = torch.randn(64, 8, device=device)
num_steps = 12
for step in range(num_steps):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(clean), clean)
    loss.backward()
    optimizer.step()

counted = model.module.steps
print(f"loss {loss.item():.4f}, forward passes counted: {counted}")
assert counted == num_steps, f"forward passes counted: {counted} of {num_steps}"
