"""znxlwm/pytorch-generative-model-collections: the GAN of the mutated file (one of nine: not
infoGAN, whose discriminator's output no longer broadcasts against its target in today's
PyTorch) as main.py builds it, on synthetic MNIST (one epoch of two steps of four images),
samples from fixed and fresh noise, then its saved G and D loaded back."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive


def _nothing(*args: object, **kwargs: object) -> None:
    return None


def body(context: drive.Context) -> None:
    drive.fake_torchvision()
    # image and plot writers the run never reads back
    drive.stub_module("scipy", misc=drive.stub_module("scipy.misc", imsave=_nothing))
    drive.stub_module("imageio", imread=_nothing, mimsave=_nothing)
    plots = {name: _nothing for name in ("plot", "xlabel", "ylabel", "legend", "grid")}
    plots.update(tight_layout=_nothing, savefig=_nothing, close=_nothing)
    pyplot = drive.stub_module("matplotlib.pyplot", **plots)
    drive.stub_module("matplotlib", pyplot=pyplot)
    script = drive.run_script(context.path("main.py"), name="gan_main")
    gan_type = context.mutated.stem
    sys.argv[1:] = ["--gan_type", gan_type, "--epoch", "1", "--batch_size", "4"]
    args = script["parse_args"]()
    gan = script[gan_type](args)
    gan.train()
    gan.visualize_results(args.epoch, fix=False)
    gan.load()


drive.main(body)
