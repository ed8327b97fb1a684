"""lucidrains/PaLM-pytorch: training loss through the autoregressive wrapper, and generation."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch


def body(context: drive.Context) -> None:
    context.import_path()
    from palm_pytorch.autoregressive_wrapper import AutoregressiveWrapper
    from palm_pytorch.palm_pytorch import PaLM

    net = PaLM(num_tokens=20, dim=16, depth=1, dim_head=8, heads=2)
    model = AutoregressiveWrapper(net, max_seq_len=8).cuda()
    tokens = torch.randint(0, 20, (2, 8)).cuda()
    model(tokens).backward()
    model.generate(tokens[:, :3], 3)


drive.main(body)
