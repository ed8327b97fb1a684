"""lucidrains/local-attention: LocalAttention with rotary embeddings, causal and not, with masks."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch


def body(context: drive.Context) -> None:
    drive.namespace_package("local_attention", context.path("local_attention"))
    from local_attention.local_attention import LocalAttention

    for causal in (True, False):
        attention = LocalAttention(
            dim=8,
            window_size=4,
            causal=causal,
            look_backward=1,
            autopad=True,
            use_xpos=causal,
        ).cuda()
        q, k, v = (torch.randn(2, 2, 10, 8).cuda().requires_grad_() for _ in range(3))
        mask = torch.ones(2, 10).bool().cuda()
        attention(q, k, v, mask=None if causal else mask).sum().backward()


drive.main(body)
