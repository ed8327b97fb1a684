"""Embeddings trained on `device` are analysed with NumPy after `.detach().cpu()`; `.item()` and
`.tolist()` read CUDA tensors directly and need no `.cpu()`.
"""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

encoder = nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 8)).to(device)
optimizer = torch.optim.Adam(encoder.parameters(), lr=1e-2)
anchors = torch.randn(30, 12, device=device)
positives = anchors + 0.05 * torch.randn_like(anchors)

for _ in range(15):
    optimizer.zero_grad()
    a = F.normalize(encoder(anchors), dim=1)
    p = F.normalize(encoder(positives), dim=1)
    loss = F.cross_entropy(a @ p.T / 0.1, torch.arange(len(a), device=device))
    loss.backward()
    optimizer.step()

embeddings = F.normalize(encoder(anchors), dim=1)
vectors = embeddings.detach().cpu().numpy()  # requires grad and lives on `device`
similarity = vectors @ vectors.T
np.fill_diagonal(similarity, -np.inf)
nearest = similarity.argmax(axis=1)

norms = embeddings.norm(dim=1)
print(f"loss {loss.item():.4f}, mean norm {norms.mean().item():.3f}")
print(f"nearest neighbours of the first five: {nearest[:5].tolist()}")
print(f"first embedding: {[round(v, 3) for v in embeddings[0].tolist()]}")
