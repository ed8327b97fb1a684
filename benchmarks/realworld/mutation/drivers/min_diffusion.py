"""cloneofsimo/minDiffusion: DDPM and DDIM training loss and sampling with the naive U-Net."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch


def body(context: drive.Context) -> None:
    context.import_path()
    from mindiffusion.ddim import DDIM
    from mindiffusion.ddpm import DDPM
    from mindiffusion.unet import NaiveUnet

    device = "cuda"
    for kind in (DDPM, DDIM):
        extra = {"eta": 0.5} if kind is DDIM else {}
        model = kind(NaiveUnet(1, 1, n_feat=8), betas=(1e-4, 0.02), n_T=3, **extra).to(device)
        model(torch.randn(2, 1, 32, 32).to(device)).backward()
        model.sample(2, (1, 32, 32), device)


drive.main(body)
