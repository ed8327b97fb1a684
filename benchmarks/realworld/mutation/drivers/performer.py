"""lucidrains/performer-pytorch: PerformerLM (causal, generalized, redrawn features) through the
autoregressive wrapper, training loss and generation."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch


class _Unused:
    """Local attention and the axial embedding: the configurations run here use neither."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("not used by this driver")


def body(context: drive.Context) -> None:
    drive.stub_module("local_attention", LocalAttention=_Unused)
    drive.stub_module("axial_positional_embedding", AxialPositionalEmbedding=_Unused)
    drive.namespace_package("performer_pytorch", context.path("performer_pytorch"))
    from performer_pytorch.autoregressive_wrapper import AutoregressiveWrapper
    from performer_pytorch.performer_pytorch import PerformerLM

    for generalized, rotary in ((False, True), (True, False)):
        net = PerformerLM(
            num_tokens=20,
            max_seq_len=8,
            dim=16,
            depth=1,
            heads=2,
            dim_head=8,
            causal=True,
            nb_features=8,
            feature_redraw_interval=1,
            generalized_attention=generalized,
            rotary_position_emb=rotary,
            shift_tokens=True,
        )
        model = AutoregressiveWrapper(net).cuda()
        tokens = torch.randint(1, 20, (2, 8)).cuda()
        model(tokens).backward()
        net.fix_projection_matrices_()
        model.generate(tokens[:, :3], 3, repetition_penalty=1.2)


drive.main(body)
