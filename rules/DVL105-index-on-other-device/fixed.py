"""Recommendations from item embeddings on `device`: the user's history ids are built on the same
device before `index_select` looks them up.
"""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

num_items, dim = 500, 32
item_vectors = nn.functional.normalize(torch.randn(num_items, dim, device=device), dim=1)

history = [3, 17, 42, 256, 311]
history_ids = torch.tensor(history, device=device)
profile = item_vectors.index_select(0, history_ids).mean(dim=0)
scores = item_vectors @ profile
scores[history_ids] = float("-inf")
recommended = scores.topk(5).indices
print(f"recommended items {recommended.tolist()} on {scores.device}")
