"""karpathy/llama2.c model.py: the Llama model's training loss and generation."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch


def body(context: drive.Context) -> None:
    context.import_path()
    from model import ModelArgs, Transformer

    args = ModelArgs(dim=16, n_layers=1, n_heads=2, n_kv_heads=1, vocab_size=20, max_seq_len=8)
    model = Transformer(args).cuda()
    tokens = torch.randint(0, 20, (2, 8)).cuda()
    model(tokens, tokens).sum()
    model.last_loss.backward()
    model.eval()
    model.generate(tokens[:, :3], 3, top_k=5)


drive.main(body)
