"""karpathy/llama2.c sample.py, export.py: export and sample a GPU-trained checkpoint, then
load it again on a machine without GPUs (where ``map_location`` matters)."""

import dataclasses
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import torch

SAMPLE = dict(checkpoint="ckpt.pt", start="abc", max_new_tokens=3, top_k=5)


class _Characters:
    """A character tokenizer in place of sentencepiece's (the run only needs ids)."""

    def __init__(self, tokenizer_model: str | None = None) -> None:
        pass

    def encode(self, text: str, bos: bool, eos: bool) -> list[int]:
        return [1] * bos + [ord(c) % 20 for c in text] + [2] * eos

    def decode(self, ids: list[int]) -> str:
        return "".join(chr(97 + i) for i in ids)


def body(context: drive.Context) -> None:
    context.import_path()
    drive.stub_module("tokenizer", Tokenizer=_Characters)
    drive.stub_module("tinystories", get_tokenizer_model_path=lambda vocab_size: "unused")
    shutil.copy(context.path("configurator.py"), "configurator.py")
    import export
    from model import ModelArgs, Transformer

    if not context.without_gpus:
        args = ModelArgs(
            dim=16, n_layers=1, n_heads=2, n_kv_heads=1, vocab_size=20, multiple_of=4, max_seq_len=8
        )
        model = Transformer(args).cuda()
        checkpoint = {
            "model": model.state_dict(),
            "model_args": dataclasses.asdict(args),
            "config": {"vocab_source": "custom"},
        }
        torch.save(checkpoint, "ckpt.pt")  # as train.py saves it: tensors on the GPU
        for version in (0, 1, 2):
            export.model_export(model, f"model_v{version}.bin", version)
        drive.run_script(context.path("sample.py"), overrides=SAMPLE)
        context.rerun_without_gpus()
        return
    export.load_checkpoint("ckpt.pt")
    drive.run_script(context.path("sample.py"), overrides=SAMPLE)


drive.main(body)
