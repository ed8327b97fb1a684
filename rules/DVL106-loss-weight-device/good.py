"""A multi-label tagger on `device`: the positive-class weights of BCEWithLogitsLoss are created on
`device`, and a functional cross-entropy gets its class weights moved next to the logits.
"""

import torch
from torch import nn
from torch.nn import functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

features = torch.randn(128, 10, device=device)
tags = (features[:, :4] > 1.0).float()
domain = (features[:, 4] > 0).long()

backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU()).to(device)
tag_head = nn.Linear(32, 4).to(device)
domain_head = nn.Linear(32, 2).to(device)
params = [*backbone.parameters(), *tag_head.parameters(), *domain_head.parameters()]
optimizer = torch.optim.Adam(params, lr=1e-2)

positives = tags.sum(dim=0).clamp(min=1)
tag_loss = nn.BCEWithLogitsLoss(pos_weight=(len(tags) - positives) / positives)
domain_weights = torch.tensor([1.0, 2.0])

for step in range(30):
    hidden = backbone(features)
    loss = tag_loss(tag_head(hidden), tags) + F.cross_entropy(
        domain_head(hidden), domain, weight=domain_weights.to(device)
    )
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f} on {hidden.device}")
