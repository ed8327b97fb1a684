"""lucidrains/nystrom-attention: the Nystromformer over a padded, masked sequence."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch


def body(context: drive.Context) -> None:
    drive.namespace_package("nystrom_attention", context.path("nystrom_attention"))
    from nystrom_attention.nystrom_attention import Nystromformer

    model = Nystromformer(
        dim=16,
        depth=1,
        dim_head=8,
        heads=2,
        num_landmarks=4,
        pinv_iterations=2,
        attn_values_residual_conv_kernel=3,
    ).cuda()
    x = torch.randn(2, 10, 16).cuda()
    mask = torch.ones(2, 10).bool().cuda()
    model(x, mask=mask).sum().backward()


drive.main(body)
