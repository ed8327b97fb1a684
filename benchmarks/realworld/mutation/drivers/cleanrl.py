"""vwxyzjn/cleanrl: single-file agents (PPO, RPO, PQN, DQN, C51, SAC, TD3, DDPG) as their
scripts run, for a few iterations on a synthetic vector environment, then (off-policy ones)
the saved model evaluated with cleanrl_utils.evals; the replay buffer of cleanrl_utils.

Only the mutated file's script runs (the buffer's and an evaluation's through DQN, C51, TD3,
DDPG). gymnasium is faked (``Tiny``: random observations, an episode ends every third step and
is reported as gymnasium's vector environments do), tyro gives the script's ``Args`` with small
sizes, tensorboard writes nothing."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive

OBSERVATION, ACTIONS, EPISODE = 4, 2, 3
SMALL = {
    "total_timesteps": 24,
    "num_envs": 2,
    "num_steps": 4,
    "num_minibatches": 2,
    "update_epochs": 1,
    "buffer_size": 64,
    "batch_size": 4,
    "learning_starts": 4,
    "train_frequency": 1,
    "target_network_frequency": 2,
    "policy_frequency": 2,
    "start_e": 0.0,
    "end_e": 0.0,
    "save_model": True,
    "cuda": True,
}
SCRIPTS = {
    "cleanrl_utils/buffers.py": "cleanrl/dqn.py",
    "cleanrl_utils/evals/dqn_eval.py": "cleanrl/dqn.py",
    "cleanrl_utils/evals/c51_eval.py": "cleanrl/c51.py",
    "cleanrl_utils/evals/td3_eval.py": "cleanrl/td3_continuous_action.py",
    "cleanrl_utils/evals/ddpg_eval.py": "cleanrl/ddpg_continuous_action.py",
}


def fake_gymnasium(continuous: bool) -> None:
    import numpy as np

    class Discrete:
        def __init__(self, n: int) -> None:
            self.n, self.shape, self.dtype = n, (), np.int64

        def sample(self) -> int:
            return int(np.random.randint(self.n))

        def seed(self, seed: int) -> None:
            pass

    class Box:
        def __init__(self, shape: tuple[int, ...]) -> None:
            self.shape, self.dtype = shape, np.float32
            self.high = np.ones(shape, dtype=np.float32)
            self.low = -self.high

        def sample(self) -> np.ndarray:
            return np.random.uniform(-1, 1, self.shape).astype(np.float32)

        def seed(self, seed: int) -> None:
            pass

    class Env:
        def __init__(self, env_id: str, **kwargs: object) -> None:
            self.observation_space = Box((OBSERVATION,))
            self.action_space = Box((ACTIONS,)) if continuous else Discrete(ACTIONS)

    class SyncVectorEnv:
        def __init__(self, thunks: list) -> None:
            envs = [thunk() for thunk in thunks]
            self.num_envs = len(envs)
            self.single_observation_space = envs[0].observation_space
            self.single_action_space = envs[0].action_space
            self.observation_space = Box((self.num_envs, OBSERVATION))
            self.action_space = Box((self.num_envs, ACTIONS)) if continuous else None
            self.steps = 0

        def _observations(self) -> np.ndarray:
            return np.random.randn(self.num_envs, OBSERVATION).astype(np.float32)

        def reset(self, seed: int | None = None) -> tuple:
            self.steps = 0
            return self._observations(), {}

        def step(self, actions: np.ndarray) -> tuple:
            assert isinstance(actions, np.ndarray)
            self.steps += 1
            done = self.steps % EPISODE == 0
            ends = np.full(self.num_envs, done)
            rewards = np.random.rand(self.num_envs).astype(np.float32)
            infos: dict = {}
            if done:
                episode = {"r": np.array([1.0]), "l": np.array([EPISODE])}
                infos = {
                    "final_info": [{"episode": episode} for _ in range(self.num_envs)],
                    "_final_info": ends,
                    "final_observation": self._observations(),
                }
            return self._observations(), rewards, ends, np.zeros(self.num_envs, bool), infos

        def close(self) -> None:
            pass

    def wrapper(env: object, *args: object, **kwargs: object) -> object:
        return env

    def any_wrapper(name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        return wrapper

    spaces = drive.stub_module("gymnasium.spaces", Discrete=Discrete, Box=Box)
    wrappers = drive.stub_module("gymnasium.wrappers")
    wrappers.__getattr__ = any_wrapper  # type: ignore[attr-defined]
    vector = drive.stub_module("gymnasium.vector", SyncVectorEnv=SyncVectorEnv)
    drive.stub_module("gymnasium", make=Env, spaces=spaces, wrappers=wrappers, vector=vector)


class _Writer:
    def __init__(self, log_dir: str, *args: object, **kwargs: object) -> None:
        os.makedirs(log_dir, exist_ok=True)  # the scripts save their models there

    def add_text(self, *args: object, **kwargs: object) -> None:
        pass

    def add_scalar(self, *args: object, **kwargs: object) -> None:
        pass

    def close(self) -> None:
        pass


def _small(cls: type) -> object:
    """tyro.cli(Args): the script's defaults with the sizes of SMALL where it has them (at most
    as many environments as it runs by default: the off-policy agents take one)."""
    args = cls()
    for name, value in SMALL.items():
        if hasattr(args, name):
            setattr(args, name, min(value, args.num_envs) if name == "num_envs" else value)
    return args


def body(context: drive.Context) -> None:
    relative = str(context.mutated.relative_to(context.tree))
    script = SCRIPTS.get(relative, relative)
    fake_gymnasium(continuous="continuous" in script)
    drive.stub_module("tyro", cli=_small)
    drive.stub_module("torch.utils.tensorboard", SummaryWriter=_Writer)
    context.import_path()
    drive.run_script(context.path(script), keywords={"eval_episodes": 2})


drive.main(body)
