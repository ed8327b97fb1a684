"""TorchScript reading x.device to place a factory (issue 35, item 2)."""

import torch


@torch.jit.script
def shifted(x: torch.Tensor) -> torch.Tensor:
    return x + torch.zeros(x.shape, device=x.device)


print("scripted", shifted(torch.ones(3, device="cuda")).device)
