"""Per-step activations are copied to the host with `.to("cpu", non_blocking=True)` and read before
the copy has finished.

On CUDA: no error, but the host copy differs from the device tensor and the assert fails.
"""

import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# On CUDA, `_to_copy` gives a non-blocking device-to-host copy a *pinned* destination and only
# enqueues cudaMemcpyAsync behind the kernels already queued on the stream, so the host reads the
# buffer before the copy lands. The matmuls below keep the GPU busy for tens of milliseconds while
# the value stays exact (x @ I == x), so the symptom is reliable. On the CPU, `.to("cpu")` of a CPU
# tensor returns the tensor itself and everything is consistent.
n = 4096 if device.type == "cuda" else 64
identity = torch.eye(n, device=device)

for step in range(1, 4):
    activations = torch.full((n, n), float(step), device=device)
    for _ in range(10):
        activations = activations @ identity  # long-running kernels; the value stays `step`
    host = activations.to("cpu", non_blocking=True)
    complete = bool((host == step).all())  # expect: DVL107
    print(f"step {step}: host copy complete: {complete}")
    assert complete, "the host copy differs from the device tensor"
