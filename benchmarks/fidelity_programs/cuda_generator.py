"""CUDA generators and RNG state (issue 35, item 4)."""

import torch

generator = torch.Generator(device="cuda")
generator.manual_seed(0)
print("generator", generator.device)
print("sample", torch.randn(3, device="cuda", generator=generator).device)
print("rng state", torch.cuda.get_rng_state().device, torch.cuda.get_rng_state().dtype)
