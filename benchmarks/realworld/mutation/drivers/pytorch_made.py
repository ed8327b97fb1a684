"""karpathy/pytorch-made run.py (with made.py): one epoch of MADE on a tiny binarised set."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive
import numpy as np


def body(context: drive.Context) -> None:
    rng = np.random.default_rng(0)
    data = {
        "train_data": (rng.random((200, 6)) > 0.5).astype(np.float32),
        "valid_data": (rng.random((100, 6)) > 0.5).astype(np.float32),
    }
    np.savez("mnist.npz", **data)
    argv = ["-d", "mnist.npz", "-q", "8", "-n", "2", "-r", "1", "-s", "2"]
    drive.run_script(context.path("run.py"), argv)


drive.main(body)
