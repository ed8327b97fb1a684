"""Per-step activations are copied to the host with `.to("cpu", non_blocking=True)`; the host waits
for the copy with `torch.cuda.synchronize()` before reading it.
"""

import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

n = 1024 if device.type == "cuda" else 64
identity = torch.eye(n, device=device)

for step in range(1, 4):
    activations = torch.full((n, n), float(step), device=device)
    if device.type == "cuda":
        torch.cuda._sleep(50_000_000)  # about 30 ms of GPU time queued ahead of the copy
    for _ in range(4):
        activations = activations @ identity  # the value stays `step`
    host = activations.to("cpu", non_blocking=True)
    if device.type == "cuda":
        torch.cuda.synchronize()  # the copy has landed
    complete = bool((host == step).all())
    print(f"step {step}: host copy complete: {complete}")
    assert complete, "the host copy differs from the device tensor"
