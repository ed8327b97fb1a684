"""jadore801120/attention-is-all-you-need-pytorch: the Transformer's loss, beam search."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch
import torch.nn.functional as F


def body(context: drive.Context) -> None:
    context.import_path()
    from transformer.Models import Transformer
    from transformer.Translator import Translator

    device = torch.device("cuda")
    model = Transformer(
        12,
        12,
        src_pad_idx=0,
        trg_pad_idx=0,
        d_word_vec=16,
        d_model=16,
        d_inner=32,
        n_layers=1,
        n_head=2,
        d_k=8,
        d_v=8,
        n_position=20,
    ).to(device)
    src = torch.randint(1, 12, (2, 5), device=device)
    trg = torch.randint(1, 12, (2, 4), device=device)
    logits = model(src, trg)
    F.cross_entropy(logits, trg.view(-1)).backward()
    model.eval()
    translator = Translator(
        model=model,
        beam_size=2,
        max_seq_len=6,
        src_pad_idx=0,
        trg_pad_idx=0,
        trg_bos_idx=1,
        trg_eos_idx=2,
    ).to(device)
    translator.translate_sentence(src[:1])


drive.main(body)
