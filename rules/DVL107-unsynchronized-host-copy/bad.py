"""Per-step activations are copied to the host with `.to("cpu", non_blocking=True)` and read before
the copy has finished.

On CUDA: no error, but the host copy differs from the device tensor and the assert fails.
"""

import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# On CUDA, `_to_copy` gives a non-blocking device-to-host copy a *pinned* destination and only
# enqueues cudaMemcpyAsync behind the kernels already queued on the stream, so the host reads the
# buffer before the copy lands. `torch.cuda._sleep` keeps the stream busy for tens of milliseconds
# before the matmuls (the value stays exact: x @ I == x), so the symptom is reliable. On the CPU,
# `.to("cpu")` of a CPU tensor returns the tensor itself and everything is consistent.
n = 1024 if device.type == "cuda" else 64
identity = torch.eye(n, device=device)

for step in range(1, 4):
    activations = torch.full((n, n), float(step), device=device)
    if device.type == "cuda":
        torch.cuda._sleep(50_000_000)  # about 30 ms of GPU time queued ahead of the copy
    for _ in range(4):
        activations = activations @ identity  # the value stays `step`
    host = activations.to("cpu", non_blocking=True)
    complete = bool((host == step).all())  # expect: DVL107
    print(f"step {step}: host copy complete: {complete}")
    assert complete, "the host copy differs from the device tensor"
