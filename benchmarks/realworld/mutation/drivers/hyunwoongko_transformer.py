"""hyunwoongko/transformer: the encoder-decoder Transformer built for a device, forward and loss."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch


def body(context: drive.Context) -> None:
    context.import_path()
    from models.model.transformer import Transformer

    device = torch.device("cuda")
    model = Transformer(
        src_pad_idx=0,
        trg_pad_idx=0,
        trg_sos_idx=1,
        enc_voc_size=12,
        dec_voc_size=12,
        d_model=16,
        n_head=2,
        max_len=10,
        ffn_hidden=32,
        n_layers=1,
        drop_prob=0.1,
        device=device,
    ).to(device)
    src = torch.randint(1, 12, (2, 6)).to(device)
    trg = torch.randint(1, 12, (2, 5)).to(device)
    model(src, trg).sum().backward()


drive.main(body)
