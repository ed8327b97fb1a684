"""princeton-vl/RAFT: train.py (the small RAFT in DataParallel over two GPUs, BatchNorm frozen
as every stage after "chairs" does) for two steps on synthetic 64x64 frames, then evaluate.py
on the checkpoint it saved (FlyingChairs, Sintel and KITTI validation, both submissions).

The datasets module, which reads the real datasets through OpenCV and PIL, is replaced by
synthetic ones of the same item layout; OpenCV, PIL, matplotlib, tensorboard and the flow
file writers are stubbed (nothing reads what they write)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive

SIZE = (64, 64)
SMALL = ["--small", "--gpus", "0", "1"]


def _nothing(*args: object, **kwargs: object) -> None:
    return None


class _Writer:
    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def add_scalar(self, *args: object, **kwargs: object) -> None:
        pass

    def close(self) -> None:
        pass


def _frames(split: str = "training", count: int = 1, **kwargs: object) -> object:
    """``count`` synthetic items as RAFT's datasets give them: frames 0-255, flow, valid mask."""
    import torch

    class Frames(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return count

        def __getitem__(self, index: int) -> tuple:
            generator = torch.Generator().manual_seed(index)
            image1 = torch.rand((3, *SIZE), generator=generator) * 255
            image2 = torch.rand((3, *SIZE), generator=generator) * 255
            if split in ("test", "testing"):
                return image1, image2, ("scene", index) if split == "test" else (f"{index}",)
            flow = torch.randn((2, *SIZE), generator=generator)
            return image1, image2, flow, torch.ones(SIZE)

    return Frames()


def _loader(args: object) -> object:
    import torch

    return torch.utils.data.DataLoader(_frames(count=2), batch_size=args.batch_size, shuffle=False)


def body(context: drive.Context) -> None:
    context.import_path("core")
    pyplot = drive.stub_module("matplotlib.pyplot")
    drive.stub_module("matplotlib", pyplot=pyplot)
    drive.stub_module("cv2")
    drive.stub_module("PIL", Image=drive.stub_module("PIL.Image"))
    drive.stub_module("torch.utils.tensorboard", SummaryWriter=_Writer)
    drive.stub_module("scipy", interpolate=drive.stub_module("scipy.interpolate"))
    drive.stub_module(
        "datasets", fetch_dataloader=_loader, FlyingChairs=_frames, MpiSintel=_frames, KITTI=_frames
    )
    import utils  # core/utils, before its frame_utils (OpenCV and PIL) is replaced

    utils.frame_utils = drive.stub_module(
        "utils.frame_utils", writeFlow=_nothing, writeFlowKITTI=_nothing
    )
    train = ["--name", "raft", "--stage", "things", "--num_steps", "1", "--batch_size", "2"]
    train += ["--image_size", *map(str, SIZE), "--iters", "2", "--add_noise", *SMALL]
    drive.run_script(context.path("train.py"), train, overrides={"SUM_FREQ": 1})
    for dataset in ("chairs", "sintel", "kitti"):
        evaluate = ["--model", "checkpoints/raft.pth", "--dataset", dataset, *SMALL[:1]]
        script = drive.run_script(context.path("evaluate.py"), evaluate, keywords={"iters": 2})
    model = script["model"].module
    script["create_sintel_submission"](model, iters=2)
    script["create_kitti_submission"](model, iters=2)


drive.main(body)
