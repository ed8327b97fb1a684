"""lucidrains/mlm-pytorch: masked-language-model loss around a tiny token model."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch
from torch import nn


def body(context: drive.Context) -> None:
    drive.namespace_package("mlm_pytorch", context.path("mlm_pytorch"))
    from mlm_pytorch.mlm_pytorch import MLM

    network = nn.Sequential(nn.Embedding(20, 16), nn.Linear(16, 20))
    trainer = MLM(
        network,
        mask_token_id=2,
        pad_token_id=0,
        mask_prob=0.5,
        replace_prob=0.8,
        num_tokens=20,
        random_token_prob=0.2,
        mask_ignore_token_ids=[1],
    ).cuda()
    tokens = torch.randint(3, 20, (2, 12)).cuda()
    trainer(tokens).backward()


drive.main(body)
