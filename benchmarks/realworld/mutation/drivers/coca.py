"""lucidrains/CoCa-pytorch: CoCa's caption and contrastive loss with a tiny image encoder."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch
from torch import nn


class _Patches(nn.Module):
    """A stand-in image encoder: 4x4 patches of a 3x8x8 image, one token each."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.project = nn.Linear(3 * 16, dim)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        patches = images.unfold(2, 4, 4).unfold(3, 4, 4).permute(0, 2, 3, 1, 4, 5)
        return self.project(patches.reshape(images.shape[0], 4, 48))


def body(context: drive.Context) -> None:
    drive.namespace_package("coca_pytorch", context.path("coca_pytorch"))
    from coca_pytorch.coca_pytorch import CoCa

    model = CoCa(
        dim=16,
        num_tokens=20,
        unimodal_depth=1,
        multimodal_depth=1,
        image_dim=16,
        num_img_queries=4,
        dim_head=8,
        heads=2,
        ff_mult=2,
        img_encoder=_Patches(16),
    ).cuda()
    text = torch.randint(0, 20, (2, 6)).cuda()
    images = torch.randn(2, 3, 8, 8).cuda()
    model(text, images=images, return_loss=True).backward()
    model(text, images=images, return_embeddings=True)


drive.main(body)
