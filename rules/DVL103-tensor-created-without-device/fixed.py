"""A small VAE draws its reparameterisation noise with `torch.randn_like(std)`, next to `std`."""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, features: int, latent: int) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(features, 32), nn.ReLU(), nn.Linear(32, 2 * latent))
        self.decoder = nn.Sequential(nn.Linear(latent, 32), nn.ReLU(), nn.Linear(32, features))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        mu, log_var = self.encoder(x).chunk(2, dim=-1)
        std = torch.exp(0.5 * log_var)
        eps = torch.randn_like(std)
        z = mu + eps * std
        return self.decoder(z), mu, log_var


model = VAE(12, 4)
model.to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
data = torch.randn(64, 12, device=device)

for step in range(30):
    reconstruction, mu, log_var = model(data)
    kl = -0.5 * torch.mean(1 + log_var - mu.pow(2) - log_var.exp())
    loss = nn.functional.mse_loss(reconstruction, data) + kl
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f} on {reconstruction.device}")
