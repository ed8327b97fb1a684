"""DLPack round trips of a GPU tensor (issue 35, item 5)."""

import torch
from torch.utils.dlpack import from_dlpack, to_dlpack

gpu = torch.arange(3.0, device="cuda")
print("capsule", from_dlpack(to_dlpack(gpu)).device)
print("protocol", torch.from_dlpack(gpu).device, gpu.__dlpack_device__())
