"""akamaster/pytorch_resnet_cifar10: trainer.py (a DataParallel ResNet-20) for two epochs on
eight synthetic CIFAR-10 images, then resumed from the checkpoint it saved and evaluated."""

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
