"""Operations that meet a GPU and a host tensor: the device each gives, or its first error line."""

import torch
import torch.nn.functional as F

gpu, host = torch.arange(6.0, device="cuda"), torch.arange(6.0)
cases = {
    "add": lambda: gpu + host,
    "add 0-dim host": lambda: gpu + torch.tensor(2.0),
    "add 0-dim gpu to host": lambda: host + torch.tensor(2.0, device="cuda"),
    "cat": lambda: torch.cat([gpu, host]),
    "stack": lambda: torch.stack([gpu, host]),
    "matmul": lambda: gpu.view(2, 3) @ host.view(3, 2),
    "where host scalars": lambda: torch.where(gpu > 2, torch.tensor(1.0), torch.tensor(0.0)),
    "index gpu by host ids": lambda: gpu[torch.tensor([0, 2])],
    "index gpu by host mask": lambda: gpu[host > 2],
    "index host by gpu ids": lambda: host[torch.tensor([0, 2], device="cuda")],
    "index_select host ids": lambda: gpu.index_select(0, torch.tensor([0, 2])),
    "gather host ids": lambda: gpu.gather(0, torch.tensor([0, 2])),
    "masked_fill host mask": lambda: gpu.masked_fill(host > 2, 0.0),
    "index_put host values": lambda: gpu.index_put_((torch.tensor([0]),), torch.tensor([9.0])),
    "setitem host values": lambda: gpu.__setitem__(slice(0, 2), torch.tensor([7.0, 8.0])),
    "embedding host ids": lambda: F.embedding(torch.tensor([1, 2]), gpu.view(3, 2)),
    "cross_entropy host labels": lambda: F.cross_entropy(gpu.view(2, 3), torch.tensor([0, 1])),
    "mse host target": lambda: F.mse_loss(gpu, host),
    "one_hot": lambda: F.one_hot(torch.tensor([0, 2], device="cuda"), 3),
    "searchsorted host values": lambda: torch.searchsorted(gpu, torch.tensor([2.5])),
    "copy_ host into gpu": lambda: gpu.clone().copy_(host),
    "linear host input": lambda: torch.nn.Linear(6, 2).cuda()(host),
    "numpy": lambda: gpu.numpy(),
    "item": lambda: gpu.sum().item(),
    "bool of gpu": lambda: bool(gpu[0] > -1),
    "tolist": lambda: gpu.tolist(),
    "pin gpu": lambda: gpu.pin_memory(),
    "cuda:1": lambda: torch.zeros(1, device="cuda:1"),
    "pack_padded gpu lengths": lambda: torch.nn.utils.rnn.pack_padded_sequence(
        gpu.view(3, 2, 1), torch.tensor([3, 2], device="cuda")
    ),
}
for name, run in cases.items():
    try:
        result = run()
        shown = result.device if isinstance(result, torch.Tensor) else type(result).__name__
        print(f"{name}: {shown}")
    except Exception as error:  # every ending is the probe's output
        print(f"{name}: {type(error).__name__}: {str(error).splitlines()[0]}")
