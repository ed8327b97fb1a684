"""lucidrains/mixture-of-experts: MoE and the hierarchical MoE, output and auxiliary loss."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch


def body(context: drive.Context) -> None:
    drive.namespace_package("mixture_of_experts", context.path("mixture_of_experts"))
    from mixture_of_experts.mixture_of_experts import HeirarchicalMoE, MoE

    inputs = torch.randn(2, 6, 16).cuda()
    for model in (MoE(dim=16, num_experts=4), HeirarchicalMoE(dim=16, num_experts=(2, 2))):
        out, aux_loss = model.cuda()(inputs)
        (out.sum() + aux_loss).backward()


drive.main(body)
