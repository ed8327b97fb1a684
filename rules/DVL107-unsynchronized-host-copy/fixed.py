"""Per-step activations are copied to the host with `.to("cpu", non_blocking=True)`; the host waits
for the copy with `torch.cuda.synchronize()` before reading it.
"""

import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

n = 4096 if device.type == "cuda" else 64
identity = torch.eye(n, device=device)

for step in range(1, 4):
    activations = torch.full((n, n), float(step), device=device)
    for _ in range(10):
        activations = activations @ identity  # long-running kernels; the value stays `step`
    host = activations.to("cpu", non_blocking=True)
    if device.type == "cuda":
        torch.cuda.synchronize()  # the copy has landed
    complete = bool((host == step).all())
    print(f"step {step}: host copy complete: {complete}")
    assert complete, "the host copy differs from the device tensor"
