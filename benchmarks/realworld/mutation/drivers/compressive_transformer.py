"""lucidrains/compressive-transformer-pytorch: the README's model on the GPU (memory layers,
GRU-gated residuals), two segments through memories, then the autoregressive wrapper's loss
over segments and its generation.

mogrifier (only with ``mogrify_gru``, off here) is stubbed."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive


def body(context: drive.Context) -> None:
    context.import_path()
    drive.stub_module("mogrifier", Mogrifier=None)
    import torch
    from compressive_transformer_pytorch import AutoregressiveWrapper, CompressiveTransformer

    model = CompressiveTransformer(
        num_tokens=32,
        emb_dim=8,
        dim=16,
        depth=2,
        seq_len=8,
        mem_len=8,
        cmem_len=2,
        cmem_ratio=4,
        heads=2,
        gru_gated_residual=True,
        memory_layers=range(2, 3),
    ).cuda()
    inputs = torch.randint(0, 32, (1, 16)).cuda()
    masks = torch.ones_like(inputs).bool()
    segments = inputs.reshape(1, -1, 8).transpose(0, 1)
    masks = masks.reshape(1, -1, 8).transpose(0, 1)
    _logits, memories, _aux_loss = model(segments[0], mask=masks[0])
    model(segments[1], mask=masks[1], memories=memories)
    wrapper = AutoregressiveWrapper(model).cuda()
    for loss, aux_loss, _ in wrapper(torch.randint(0, 32, (2, 17)).cuda(), 1, return_loss=True):
        (loss + aux_loss).backward()  # as the enwik8 example trains: segment by segment
    wrapper.generate(torch.randint(0, 32, (1, 2)).cuda(), 4)


drive.main(body)
