"""nikhilbarhate99/PPO-PyTorch PPO.py: the agent as train.py and test.py use it, with a
continuous and a discrete action space: actions selected on a synthetic episode, an update,
the action std decayed, a checkpoint saved; then, without GPUs, the checkpoint loaded and
acted on as test.py does."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive

STATE, ACTIONS = 4, 2


def episode(agent: object, steps: int = 5) -> None:
    """A few steps of train.py's loop on random states; rewards and ends as it records them."""
    import numpy as np

    for step in range(steps):
        agent.select_action(np.random.randn(STATE).astype(np.float32))
        agent.buffer.rewards.append(float(np.random.rand()))
        agent.buffer.is_terminals.append(step == steps - 1)


def body(context: drive.Context) -> None:
    context.import_path()
    import PPO

    for continuous in (True, False):
        agent = PPO.PPO(STATE, ACTIONS, 3e-4, 1e-3, 0.99, 2, 0.2, continuous, 0.6)
        checkpoint = f"ppo_{continuous}.pth"
        if context.without_gpus:
            agent.load(checkpoint)
            agent.select_action([0.0] * STATE)
            continue
        episode(agent)
        agent.update()
        if continuous:
            agent.decay_action_std(0.05, 0.1)
        episode(agent)
        agent.update()
        agent.save(checkpoint)
    if not context.without_gpus:
        context.rerun_without_gpus()


drive.main(body)
