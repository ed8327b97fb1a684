"""Constructors given a GPU tensor and an explicit host device (issue 35, item 1)."""

import warnings

import torch

warnings.simplefilter("ignore")
gpu = torch.ones(2, device="cuda")
print("as_tensor", torch.as_tensor(gpu, device="cpu").device)
print("tensor", torch.tensor(gpu, device="cpu").device)
print("asarray", torch.asarray(gpu, device="cpu").device)
print("sum", (torch.as_tensor(gpu, device="cpu") + torch.ones(2)).device)
