"""What every driver shares: run a pinned source file's code on tiny synthetic inputs.

A driver is called as ``python DRIVER TREE MUTATED RESULT`` (under the emulator): ``TREE`` is
a copy of the repository with one file (``MUTATED``, relative to ``TREE``) possibly mutated,
``RESULT`` is where :func:`main` writes the lines of ``MUTATED`` that a failure's stack went
through. The driver works in a fresh folder inside ``TREE`` (synthetic data files go there).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import traceback
import types
from collections.abc import Callable
from pathlib import Path

WITHOUT_GPUS = "--without-gpus"


class Context:
    """Where the driver runs: the tree, the mutated file, the scratch folder."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = list(argv)
        self.tree = Path(argv[1]).resolve()
        self.mutated = (self.tree / argv[2]).resolve()
        self.result = Path(argv[3])
        self.without_gpus = WITHOUT_GPUS in argv[4:]
        """This process is the driver's second run, on a machine without GPUs."""
        self.scratch = self.tree / ".mutation-run"
        self.scratch.mkdir(exist_ok=True)
        os.chdir(self.scratch)

    def rerun_without_gpus(self) -> None:
        """Run the driver again where no GPU is visible (a CPU-only machine, same scratch folder).

        The second run sees ``without_gpus``; its failure is the driver's failure. The
        emulator follows ``CUDA_VISIBLE_DEVICES`` into the new process as CUDA would.
        """
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
        done = subprocess.run([sys.executable, *self.argv[:4], WITHOUT_GPUS], env=env)
        if done.returncode != 0:
            raise _SecondRunFailed(f"the run without GPUs exited {done.returncode}")

    def path(self, relative: str) -> str:
        return str(self.tree / relative)

    def import_path(self, relative: str = ".") -> None:
        """Let ``import`` find the tree's modules under ``relative``."""
        sys.path.insert(0, self.path(relative))


def main(body: Callable[[Context], None]) -> None:
    """Run ``body``; on failure, record the lines of ``MUTATED`` on its stack, then fail."""
    context = Context(sys.argv)
    try:
        body(context)
    except _SecondRunFailed:
        raise  # the second run recorded its own failure
    except BaseException as error:
        context.result.write_text(json.dumps(_failure(error, context.mutated)))
        raise


class _SecondRunFailed(Exception):
    pass


def _failure(error: BaseException, mutated: Path) -> dict:
    """Type, message and the lines of the mutated file on the failure's stack, innermost last.

    A failure in a DataParallel replica is re-raised in the main thread with the replica's
    traceback as text in its message: that text is searched too.
    """
    lines = [
        frame.lineno
        for frame in traceback.extract_tb(error.__traceback__)
        if Path(frame.filename).resolve() == mutated
    ]
    pattern = re.escape(f'File "{mutated}", line ') + r"(\d+)"
    lines += [int(found) for found in re.findall(pattern, str(error))]
    return {"type": type(error).__name__, "message": str(error)[:2000], "lines": lines}


def run_script(
    path: str,
    argv: list[str] | None = None,
    overrides: dict[str, object] | None = None,
    keywords: dict[str, object] | None = None,
    name: str = "__main__",
) -> dict:
    """Execute the script at ``path`` as ``python path argv`` would, with small settings.

    ``overrides`` replace the value of the script's top-level assignments to those names
    (epochs, sizes): the code is recompiled from its syntax tree, so every line keeps its
    number. ``keywords`` do the same for keyword arguments of any call (``max_new_tokens=``).
    Returns the script's globals.
    """
    source = Path(path).read_text(encoding="utf-8")
    tree = ast.parse(source, filename=path)
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and keywords and node.arg in keywords:
            value = ast.parse(repr(keywords[node.arg]), mode="eval").body
            node.value = ast.copy_location(value, node.value)
            ast.fix_missing_locations(node)
    for node in tree.body:
        if isinstance(node, ast.Assign) and overrides:
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in overrides:
                    value = ast.parse(repr(overrides[target.id]), mode="eval").body
                    node.value = ast.copy_location(value, node.value)
                    ast.fix_missing_locations(node)
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    sys.argv = [path, *(argv or [])]
    sys.path.insert(0, str(Path(path).parent))
    exec(compile(tree, path, "exec"), module.__dict__)
    return module.__dict__


def stub_module(name: str, **attributes: object) -> types.ModuleType:
    """A stand-in for an optional third-party module the source imports but the run never needs."""
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    sys.modules[name] = module
    return module


def namespace_package(name: str, folder: str) -> None:
    """Import ``name``'s submodules from ``folder`` without running its ``__init__``."""
    package = types.ModuleType(name)
    package.__path__ = [folder]
    sys.modules[name] = package


def fake_torchvision(samples: int = 8) -> None:
    """torchvision's datasets, transforms and ``save_image`` for scripts that only train on them.

    torchvision does not import against this torch. The datasets are ``samples`` random
    images of MNIST's or CIFAR-10's shape, already tensors; every transform is the identity.
    """
    import torch

    class _Images(torch.utils.data.Dataset):
        def __init__(self, shape: tuple[int, ...], *args: object, **kwargs: object) -> None:
            generator = torch.Generator().manual_seed(0)
            self.images = torch.rand((samples, *shape), generator=generator)
            self.labels = torch.randint(0, 10, (samples,), generator=generator)

        def __len__(self) -> int:
            return samples

        def __getitem__(self, index: int) -> tuple:
            return self.images[index], int(self.labels[index])

    def dataset(shape: tuple[int, ...]) -> Callable[..., _Images]:
        return lambda *args, **kwargs: _Images(shape)

    def transform(*args: object, **kwargs: object) -> Callable[[object], object]:
        return lambda value: value

    datasets = stub_module(
        "torchvision.datasets", MNIST=dataset((1, 28, 28)), CIFAR10=dataset((3, 32, 32))
    )

    def any_transform(name: str) -> Callable[..., Callable[[object], object]]:
        if name.startswith("__"):  # ``__file__`` and kin, which ``inspect`` asks every module
            raise AttributeError(name)
        return transform

    transforms = stub_module("torchvision.transforms")
    transforms.__getattr__ = any_transform  # type: ignore[attr-defined]
    utils = stub_module("torchvision.utils", save_image=lambda *args, **kwargs: None)
    stub_module("torchvision", datasets=datasets, transforms=transforms, utils=utils)


def fake_gym(state_size: int = 3, action_size: int = 2, episode: int = 4) -> None:
    """gym for scripts that only step an environment: ``gym.make`` gives one of the right shapes.

    States are random, the reward is the action's sum, an episode ends after ``episode`` steps.
    """
    import numpy as np

    class Box:
        def __init__(self, size: int) -> None:
            self.shape = (size,)
            self.high = np.ones(size, dtype=np.float32)
            self.low = -self.high

        def seed(self, seed: int) -> None:
            pass

        def sample(self) -> np.ndarray:
            return np.random.uniform(-1, 1, self.shape).astype(np.float32)

    class Environment:
        _max_episode_steps = episode

        def __init__(self, name: str) -> None:
            self.observation_space, self.action_space = Box(state_size), Box(action_size)
            self.steps = 0

        def seed(self, seed: int) -> None:
            pass

        def reset(self) -> np.ndarray:
            self.steps = 0
            return np.random.randn(state_size)

        def step(self, action: np.ndarray) -> tuple:
            self.steps += 1
            state = np.random.randn(state_size)
            return state, float(np.sum(action)), self.steps >= episode, {}

        def close(self) -> None:
            pass

    stub_module("gym", make=Environment)
