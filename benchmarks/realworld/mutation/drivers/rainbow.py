"""Kaixhin/Rainbow: main.py (the data-efficient Rainbow agent) for 24 steps on a synthetic
Atari screen: validation memory, noisy-net acting, prioritised n-step learning, an evaluation,
target updates, the model saved by the evaluation; then, without GPUs, main.py --evaluate from it.
Learning starts late enough for the prioritised memory to find a valid transition in every
segment it samples (with fewer it retries forever).

atari_py's emulator is replaced by one of random grayscale screens (an episode ends after
eight frames), OpenCV's resize by a random 84x84 frame, tqdm's trange by range and plotly
(the evaluation's plots) by functions that draw nothing."""

import importlib.machinery
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive

SMALL = ["--architecture", "data-efficient", "--hidden-size", "16", "--T-max", "24"]
SMALL += ["--learn-start", "16", "--memory-capacity", "64", "--batch-size", "2"]
SMALL += ["--replay-frequency", "4", "--evaluation-interval", "12", "--evaluation-size", "4"]
SMALL += ["--evaluation-episodes", "1", "--target-update", "8"]
SMALL += ["--multi-step", "2", "--max-episode-length", "100"]


def _nothing(*args: object, **kwargs: object) -> None:
    return None


class _Ale:
    """atari_py.ALEInterface: random 210x160 grayscale screens, a game of eight frames."""

    def __init__(self) -> None:
        self.frames = 0

    def __getattr__(self, name: str) -> object:  # setInt, setFloat, setBool, loadROM
        return _nothing

    def getMinimalActionSet(self) -> list[int]:
        return [0, 1, 3]

    def getScreenGrayscale(self) -> object:
        import numpy as np

        return np.random.randint(0, 256, (210, 160), dtype=np.uint8)

    def act(self, action: int) -> float:
        self.frames += 1
        return 1.0

    def game_over(self) -> bool:
        return self.frames >= 8

    def reset_game(self) -> None:
        self.frames = 0

    def lives(self) -> int:
        return 3


def _resize(image: object, size: tuple[int, int], interpolation: int = 0) -> object:
    import numpy as np

    return np.random.randint(0, 256, size, dtype=np.uint8)


def body(context: drive.Context) -> None:
    context.import_path()
    drive.stub_module(
        "atari_py",
        ALEInterface=_Ale,
        get_game_path=lambda game: game,
        list_games=lambda: ["space_invaders"],
    )
    drive.stub_module("cv2", resize=_resize, INTER_LINEAR=1, destroyAllWindows=_nothing)
    tqdm = drive.stub_module("tqdm", trange=lambda start, stop: range(start, stop))
    tqdm.__spec__ = importlib.machinery.ModuleSpec("tqdm", None)  # torch asks find_spec("tqdm")
    graph_objs = drive.stub_module("plotly.graph_objs", Scatter=_nothing)
    graph_objs.scatter = drive.stub_module("plotly.graph_objs.scatter", Line=_nothing)
    offline = drive.stub_module("plotly.offline", plot=_nothing)
    drive.stub_module("plotly", graph_objs=graph_objs, offline=offline)
    if not context.without_gpus:
        drive.run_script(context.path("main.py"), SMALL)
        context.rerun_without_gpus()
        return
    resumed = ["--evaluate", "--model", "results/default/model.pth"]
    drive.run_script(context.path("main.py"), [*SMALL, *resumed])


drive.main(body)
