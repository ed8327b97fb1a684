"""What a CUDA build says of itself (issue 35, item 5)."""

import torch

print("version.cuda", torch.version.cuda is not None)
print("cudnn", torch.backends.cudnn.is_available())
print("capability", len(torch.cuda.get_device_capability()))
print("bf16", torch.cuda.is_bf16_supported())
