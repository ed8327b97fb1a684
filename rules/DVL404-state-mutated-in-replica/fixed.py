"""A denoising model anneals the noise it adds to its inputs with a step counter kept in a
buffer and updated in place in `forward`; the model is trained wrapped in nn.DataParallel,
whose replica on device_ids[0] shares its parameters and buffers with the model, so in-place
updates made there are kept.
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
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        noise_scale = (1.0 - self.steps / self.anneal_steps).clamp(min=0.0)
        self.steps.add_(1)
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

counted = model.module.steps.item()
print(f"loss {loss.item():.4f}, forward passes counted: {counted}")
assert counted == num_steps, f"forward passes counted: {counted} of {num_steps}"
