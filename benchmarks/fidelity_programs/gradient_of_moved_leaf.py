"""The gradient of a CPU leaf used on the GPU (issue 35, item 5)."""

import torch

leaf = torch.ones(3, requires_grad=True)
(leaf.cuda() * 2).sum().backward()
print("grad", leaf.grad.device, leaf.grad.tolist())
