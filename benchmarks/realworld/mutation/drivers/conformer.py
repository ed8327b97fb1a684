"""lucidrains/conformer: a Conformer block stack over a masked sequence."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch


def body(context: drive.Context) -> None:
    drive.namespace_package("conformer", context.path("conformer"))
    from conformer.conformer import Conformer

    for causal in (False, True):
        model = Conformer(
            16, depth=1, dim_head=8, heads=2, ff_mult=2, conv_kernel_size=3, conv_causal=causal
        ).cuda()
        x = torch.randn(2, 10, 16).cuda()
        model(x).sum().backward()


drive.main(body)
