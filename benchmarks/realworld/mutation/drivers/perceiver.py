"""lucidrains/perceiver-pytorch: Perceiver on an image with a mask, PerceiverIO, PerceiverLM."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch


def body(context: drive.Context) -> None:
    drive.namespace_package("perceiver_pytorch", context.path("perceiver_pytorch"))
    from perceiver_pytorch.perceiver_io import PerceiverLM
    from perceiver_pytorch.perceiver_pytorch import Perceiver

    model = Perceiver(
        num_freq_bands=2,
        depth=1,
        max_freq=4.0,
        input_channels=3,
        input_axis=2,
        num_latents=4,
        latent_dim=16,
        cross_heads=1,
        latent_heads=2,
        cross_dim_head=8,
        latent_dim_head=8,
        num_classes=5,
    ).cuda()
    image = torch.randn(2, 4, 4, 3).cuda()
    mask = torch.ones(2, 16).bool().cuda()
    model(image, mask=mask).sum().backward()
    language = PerceiverLM(
        num_tokens=20,
        dim=16,
        depth=1,
        max_seq_len=8,
        num_latents=4,
        latent_dim=16,
        cross_heads=1,
        latent_heads=2,
        cross_dim_head=8,
        latent_dim_head=8,
        seq_dropout_prob=0.5,
    ).cuda()
    tokens = torch.randint(0, 20, (2, 8)).cuda()
    language(tokens, mask=torch.ones(2, 8).bool().cuda()).sum().backward()


drive.main(body)
