"""lucidrains/slot-attention: SlotAttention and MultiHeadSlotAttention over a set of features."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch


def body(context: drive.Context) -> None:
    drive.namespace_package("slot_attention", context.path("slot_attention"))
    from slot_attention.multi_head_slot_attention import MultiHeadSlotAttention
    from slot_attention.slot_attention import SlotAttention

    inputs = torch.randn(2, 6, 16).cuda()
    SlotAttention(num_slots=3, dim=16, iters=2, hidden_dim=16).cuda()(inputs).sum().backward()
    heads = MultiHeadSlotAttention(num_slots=3, dim=16, heads=2, dim_head=8, iters=2).cuda()
    heads(inputs).sum().backward()


drive.main(body)
