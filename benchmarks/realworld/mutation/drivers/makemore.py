"""karpathy/makemore makemore.py: every model type, one training step, evaluation, sampling."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive

TYPES = ("transformer", "bigram", "mlp", "rnn", "gru", "bow")
NAMES = "emma olivia ava isabella sophia mia charlotte amelia harper evelyn abigail emily ella"


def body(context: drive.Context) -> None:
    Path("names.txt").write_text("\n".join(NAMES.split() * 3) + "\n")
    drive.stub_module("torch.utils.tensorboard", SummaryWriter=_Writer)
    for kind in TYPES:
        argv = ["-i", "names.txt", "-o", "out", "--max-steps", "1", "--device", "cuda"]
        argv += ["--num-workers", "0", "--type", kind, "--n-layer", "1", "--n-head", "2"]
        argv += ["--n-embd", "16", "--n-embd2", "16", "--batch-size", "4"]
        script = drive.run_script(str(context.mutated), argv)
        script["evaluate"](script["model"], script["test_dataset"], batch_size=4, max_batches=1)
        script["print_samples"](num=2)


class _Writer:
    """tensorboard's SummaryWriter, which the run never reads back."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def add_scalar(self, *args: object, **kwargs: object) -> None:
        pass

    def flush(self) -> None:
        pass


drive.main(body)
