"""NVIDIA/pix2pixHD train.py: a tiny global generator and one discriminator in DataParallel
over two GPUs (as create_model wraps them for training), two epochs of one batch of two
synthetic 32x32 image pairs: losses, both optimisers, results displayed, the latest and
per-epoch checkpoints saved, the learning rate decayed.

The data loader (PIL images from disk) is replaced by one of the same batch layout (label,
instance, image and feature maps; no instance maps, label_nc 0), the visualizer (HTML pages,
TensorBoard) by one that shows nothing; torchvision does not import against this torch (only
the VGG loss, which is off, needs it). train.py's lcm uses ``fractions.gcd``, removed in
Python 3.9: it is given ``math.gcd``. The emulator does not construct the legacy CUDA tensor
types (``torch.cuda.FloatTensor(size)``, which the GAN loss uses for its targets): they are
given as the CPU type's tensor moved to the current GPU, which is what CUDA builds."""

import fractions
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive

SIZE, BATCH = 32, 2
OPTIONS = ["--name", "tiny", "--checkpoints_dir", "checkpoints", "--gpu_ids", "0,1"]
OPTIONS += ["--batchSize", str(BATCH), "--loadSize", str(SIZE), "--fineSize", str(SIZE)]
OPTIONS += ["--label_nc", "0", "--no_instance", "--no_vgg_loss", "--ngf", "8", "--ndf", "8"]
OPTIONS += ["--n_downsample_global", "2", "--n_blocks_global", "1", "--num_D", "1"]
OPTIONS += ["--n_layers_D", "1", "--niter", "1", "--niter_decay", "1"]
OPTIONS += ["--display_freq", "1", "--print_freq", "1", "--save_latest_freq", "2"]
OPTIONS += ["--save_epoch_freq", "1", "--nThreads", "0"]


class _Loader:
    """CreateDataLoader(opt): one batch of AlignedDataset's layout, random images in [-1, 1]."""

    def __init__(self, opt: object) -> None:
        import torch

        generator = torch.Generator().manual_seed(0)
        images = torch.rand((2, BATCH, 3, SIZE, SIZE), generator=generator) * 2 - 1
        self.batch = {
            "label": images[0],
            "inst": torch.zeros(BATCH, dtype=torch.long),
            "image": images[1],
            "feat": torch.zeros(BATCH, dtype=torch.long),
            "path": ["synthetic.png"] * BATCH,
        }

    def load_data(self) -> list:
        return [self.batch]

    def __len__(self) -> int:
        return BATCH


class _Visualizer:
    def __init__(self, opt: object) -> None:
        pass

    def __getattr__(self, name: str) -> object:
        return lambda *args, **kwargs: None


def _legacy_cuda_types() -> None:
    import torch

    for name in ("FloatTensor", "ByteTensor", "LongTensor"):
        host = getattr(torch, name)
        setattr(torch.cuda, name, lambda *args, host=host: host(*args).cuda())


def body(context: drive.Context) -> None:
    context.import_path()
    fractions.gcd = math.gcd  # type: ignore[attr-defined]
    _legacy_cuda_types()
    drive.fake_torchvision()
    sys.modules["torchvision"].models = drive.stub_module("torchvision.models")
    drive.stub_module("PIL", Image=drive.stub_module("PIL.Image"))
    import data
    import util

    data.data_loader = drive.stub_module("data.data_loader", CreateDataLoader=_Loader)
    util.visualizer = drive.stub_module("util.visualizer", Visualizer=_Visualizer)
    drive.run_script(context.path("train.py"), OPTIONS)


drive.main(body)
