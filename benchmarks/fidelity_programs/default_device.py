"""torch.set_default_device("cuda") (issue 35, item 5)."""

import torch

torch.set_default_device("cuda")
print("factory", torch.zeros(2).device)
print("module", torch.nn.Linear(2, 2).weight.device)
print("host", torch.zeros(2, device="cpu").device)
