"""lucidrains/RETRO-pytorch retro_pytorch.py: a tiny RETRO on the GPU as the README trains it:
the loss with retrieved neighbours (a mask from the pad token), the loss without retrieval,
and the decoder alone.

The package's other modules (retrieval through faiss and a BERT tokenizer, the data set and
the training wrapper) are not imported: only the vocabulary size is taken from retrieval."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive


def body(context: drive.Context) -> None:
    drive.namespace_package("retro_pytorch", context.path("retro_pytorch"))
    drive.stub_module("retro_pytorch.retrieval", BERT_VOCAB_SIZE=28996)
    import torch
    from retro_pytorch.retro_pytorch import RETRO

    for deepnet in (False, True):
        retro = RETRO(
            num_tokens=64,
            chunk_size=4,
            max_seq_len=16,
            enc_dim=16,
            enc_depth=1,
            dec_dim=16,
            dec_depth=2,
            dec_cross_attn_layers=(2,),
            heads=1,
            dim_head=40,
            use_deepnet=deepnet,
        ).cuda()
        seq = torch.randint(1, 64, (2, 16 + 1)).cuda()
        retrieved = torch.randint(0, 64, (2, 4, 2, 8)).cuda()
        retro(seq, retrieved, return_loss=True).backward()
        retro(seq[:, :-1], retrieved=None)


drive.main(body)
