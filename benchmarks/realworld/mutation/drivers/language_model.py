"""yunjey/pytorch-tutorial language_model/main.py: an RNN LM one epoch on synthetic text, sample."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive

SMALL = dict(embed_size=8, hidden_size=16, num_epochs=1, num_samples=5, batch_size=2)
SMALL.update(seq_length=5)


def body(context: drive.Context) -> None:
    Path("data").mkdir(exist_ok=True)
    Path("data/train.txt").write_text("the cat sat on the mat and the dog ran off\n" * 6)
    folder = "tutorials/02-intermediate/language_model"
    drive.run_script(context.path(f"{folder}/main.py"), overrides=SMALL)


drive.main(body)
