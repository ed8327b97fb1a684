"""Recommendations from item embeddings on `device`: the user's history is looked up with
`index_select` and item ids built on the CPU.

On CUDA: RuntimeError: Expected all tensors to be on the same device (index of index_select).
"""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

num_items, dim = 500, 32
item_vectors = nn.functional.normalize(torch.randn(num_items, dim, device=device), dim=1)

history = [3, 17, 42, 256, 311]
history_ids = torch.tensor(history)
# CUDA: "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and
# cpu! (when checking argument for argument index in method wrapper_CUDA__index_select)"; recent
# releases: "... but got index is on cpu, different from other tensors on cuda:0 (when checking
# argument in method wrapper_CUDA__index_select)". nn.Embedding fails the same way (it calls
# index_select); gather and scatter name their own wrappers.
profile = item_vectors.index_select(0, history_ids).mean(dim=0)  # expect: DVL105
scores = item_vectors @ profile
scores[history_ids] = float("-inf")  # advanced indexing accepts CPU indices: fine
recommended = scores.topk(5).indices
print(f"recommended items {recommended.tolist()} on {scores.device}")
