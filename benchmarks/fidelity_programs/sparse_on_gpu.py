"""Sparse tensors on the GPU (issue 35, item 5)."""

import torch

sparse = torch.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2)).cuda()
print("sparse", sparse.device, sparse.is_sparse)
print("spmm", (sparse @ torch.ones(2, 1, device="cuda")).device)
print("dense", sparse.to_dense().device)
