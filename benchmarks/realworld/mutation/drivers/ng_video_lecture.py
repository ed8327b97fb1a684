"""karpathy/ng-video-lecture gpt.py, bigram.py: train two steps on synthetic text, sample."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive

SMALL = dict(batch_size=4, block_size=8, max_iters=2, eval_interval=1, eval_iters=1)
SMALL.update(n_embd=16, n_head=2, n_layer=1)


def body(context: drive.Context) -> None:
    Path("input.txt").write_text("the quick brown fox jumps over the lazy dog\n" * 40)
    drive.run_script(str(context.mutated), overrides=SMALL, keywords={"max_new_tokens": 4})


drive.main(body)
