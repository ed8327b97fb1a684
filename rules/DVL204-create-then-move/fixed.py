"""A denoising autoencoder draws its noise and corruption mask directly on `device` every step:
no host allocation, no host-to-device copy.
"""

import torch
import torch.nn.functional as F
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 32)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
clean = torch.randn(128, 32, device=device)

for step in range(50):
    noise = 0.1 * torch.randn(128, 32, device=device)
    keep = torch.rand(128, 32, device=device) > 0.2
    corrupted = (clean + noise) * keep
    optimizer.zero_grad()
    loss = F.mse_loss(model(corrupted), clean)
    loss.backward()
    optimizer.step()
print(f"reconstruction loss after {step + 1} steps: {loss.item():.4f} on {loss.device}")
