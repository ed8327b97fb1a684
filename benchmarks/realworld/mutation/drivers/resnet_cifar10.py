"""akamaster/pytorch_resnet_cifar10: trainer.py (a ResNet-20 in DataParallel over two GPUs) for
two epochs on eight synthetic CIFAR-10 images, then resumed from its checkpoint and evaluated.

With one GPU DataParallel moves the module itself; the script is written for several."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive

SMALL = ["--arch", "resnet20", "--epochs", "2", "-b", "4", "--workers", "0", "--save-dir", "save"]


def body(context: drive.Context) -> None:
    drive.fake_torchvision()
    trainer = context.path("trainer.py")
    drive.run_script(trainer, SMALL)
    sys.modules.pop("resnet", None)
    drive.run_script(trainer, [*SMALL, "--resume", "save/checkpoint.th", "--evaluate"])


drive.main(body)
