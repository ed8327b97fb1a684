"""lucidrains/egnn-pytorch: the EGNN network on a small masked point cloud, with neighbours."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch


def body(context: drive.Context) -> None:
    drive.namespace_package("egnn_pytorch", context.path("egnn_pytorch"))
    from egnn_pytorch.egnn_pytorch import EGNN_Network

    model = EGNN_Network(
        num_tokens=10,
        num_positions=8,
        dim=16,
        depth=1,
        num_nearest_neighbors=3,
        fourier_features=2,
        global_linear_attn_every=1,
        global_linear_attn_heads=2,
        global_linear_attn_dim_head=8,
        num_global_tokens=2,
        m_dim=8,
        norm_coors=True,
        coor_weights_clamp_value=2.0,
    ).cuda()
    feats = torch.randint(0, 10, (2, 8)).cuda()
    coors = torch.randn(2, 8, 3).cuda()
    mask = torch.ones(2, 8).bool().cuda()
    out, coors_out = model(feats, coors, mask=mask)
    (out.sum() + coors_out.sum()).backward()


drive.main(body)
