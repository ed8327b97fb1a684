"""yunjey/pytorch-tutorial: the image scripts, one epoch on a few synthetic images each."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive

SMALL = dict(num_epochs=1, batch_size=4, hidden_size=8, latent_size=4)


def body(context: drive.Context) -> None:
    drive.fake_torchvision()
    drive.run_script(str(context.mutated), overrides=SMALL)


drive.main(body)
