"""`Tensor.to()` returns a moved copy, so a bare `corpus.to(device)` moves nothing.

On CUDA no error is raised there: the corpus silently stays on the CPU and the final assert fails.
"""

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

encoder = nn.Linear(64, 16)
encoder.to(device)  # fine: a module moves its parameters in place

corpus = torch.randn(256, 64)
corpus = corpus / corpus.norm(dim=1, keepdim=True)
corpus.to(device)  # expect: DVL201@1

print(f"encoder on {next(encoder.parameters()).device}, corpus on {corpus.device}")
assert corpus.device.type == device.type, "the corpus was never moved to the device"
