"""LazyModules, moved before and after their first call (issue 35, item 5)."""

import torch

on_host = torch.nn.LazyLinear(3)
on_host(torch.ones(2, 4))
print("host", on_host.weight.device)
moved = torch.nn.LazyLinear(3).cuda()
print("moved", moved(torch.ones(2, 4, device="cuda")).device, moved.weight.device)
