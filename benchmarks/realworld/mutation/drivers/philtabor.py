"""philtabor/Youtube-Code-Repository: the PyTorch agents of the reinforcement-learning videos
(DDPG, TD3, SAC, PPO, two DQNs, actor-critic, REINFORCE; not the dueling DQNs and the
replay actor-critic, which fail with today's PyTorch or as written) on random states as their main
scripts drive them: actions chosen, transitions stored, learning steps, models saved and loaded
where the agent can; and the two MNIST CNN scripts for one epoch on synthetic images.

Only the mutated file's agent runs. States are random, rewards random, an episode ends every
fifth step; networks are small where the agent lets the caller choose."""

import os
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive

STATE, ACTIONS, STEPS = 8, 2, 12
RL = "ReinforcementLearning/"
PG, DQL = RL + "PolicyGradient/", RL + "DeepQLearning/"


def _nothing(*args: object, **kwargs: object) -> None:
    return None


def _states(steps: int = STEPS) -> object:
    import numpy as np

    for step in range(steps):
        yield np.random.randn(STATE).astype(np.float32), float(np.random.rand()), step % 5 == 4


def _replay(agent: object, store: Callable, numpy_action: bool = False) -> None:
    """choose, store the transition, learn: the loop of the DQN, DDPG, TD3 and SAC mains."""
    import numpy as np

    state = np.random.randn(STATE).astype(np.float32)
    for next_state, reward, done in _states():
        action = agent.choose_action(state)
        store(state, np.asarray(action) if numpy_action else action, reward, next_state, done)
        agent.learn()
        state = next_state


def _env() -> object:
    drive.fake_gym(state_size=STATE, action_size=ACTIONS)
    import gym

    return gym.make("Tiny")


def continuous(module: object, **options: object) -> None:
    """DDPG, TD3 and SAC: remember and learn every step, then the models saved and loaded."""
    agent = module.Agent(
        input_dims=[STATE],
        env=_env(),
        n_actions=ACTIONS,
        batch_size=4,
        layer1_size=16,
        layer2_size=16,
        **options,
    )
    _replay(agent, agent.remember)
    agent.save_models()
    agent.load_models()


def ppo(module: object) -> None:
    agent = module.Agent(n_actions=ACTIONS, input_dims=[STATE], batch_size=4, n_epochs=2)
    for step, (state, reward, done) in enumerate(_states()):
        action, prob, value = agent.choose_action(state)
        agent.remember(state, action, prob, value, reward, done)
        if step % 6 == 5:
            agent.learn()
    agent.save_models()
    agent.load_models()


def dqn(module: object, **options: object) -> None:
    agent = module.Agent(
        gamma=0.99, epsilon=0.0, input_dims=[STATE], batch_size=4, n_actions=ACTIONS, **options
    )
    memory = getattr(agent, "memory", None)
    store = memory.store_transition if memory is not None else agent.store_transition
    _replay(agent, store)
    if hasattr(agent, "save_models"):
        agent.save_models()
        agent.load_models()


def actor_critic(module: object, continuous: bool) -> None:
    size = {"layer1_size": 16, "layer2_size": 16}
    agents = [module.Agent(alpha=1e-4, beta=1e-4, input_dims=[STATE], n_actions=ACTIONS, **size)]
    if continuous:
        agents.append(module.NewAgent(alpha=1e-4, beta=1e-4, input_dims=[STATE], **size))
    else:
        agents.append(module.NewAgent(alpha=1e-4, input_dims=[STATE], n_actions=ACTIONS, **size))
    import numpy as np

    for agent in agents:
        state = np.random.randn(STATE).astype(np.float32)
        for next_state, reward, done in _states(4):
            agent.choose_action(state)
            agent.learn(state, reward, next_state, done)
            state = next_state


def reinforce(module: object) -> None:
    agent = module.PolicyGradientAgent(
        ALPHA=1e-3, input_dims=[STATE], n_actions=ACTIONS, layer1_size=16, layer2_size=16
    )
    for state, reward, _done in _states(5):
        agent.choose_action(state)
        agent.store_rewards(reward)
    agent.learn()


def cnn(context: drive.Context) -> None:
    drive.fake_torchvision()
    pyplot = drive.stub_module("matplotlib.pyplot", plot=_nothing, show=_nothing)
    drive.stub_module("matplotlib", pyplot=pyplot)
    keywords = {"batch_size": 4, "epochs": 1, "num_workers": 0}
    drive.run_script(str(context.mutated), keywords=keywords)


AGENTS: dict[str, Callable[[object], None]] = {
    PG + "DDPG/pytorch/lunar-lander/ddpg_torch.py": lambda module: continuous(
        module, alpha=1e-4, beta=1e-3, tau=0.001
    ),
    # no warm-up: its random actions (a CPU tensor plus a CUDA scalar) fail on a GPU as written
    PG + "TD3/td3_torch.py": lambda module: continuous(
        module, alpha=1e-3, beta=1e-3, tau=0.005, warmup=0
    ),
    PG + "SAC/sac_torch.py": continuous,
    PG + "SAC/networks.py": continuous,
    PG + "PPO/torch/ppo_torch.py": ppo,
    DQL + "simple_dqn_torch_2020.py": lambda module: dqn(module, lr=1e-3),
    RL + "CombinedExperienceReplay/dqn_torch.py": lambda module: dqn(
        module, lr=1e-3, combined=True
    ),
    PG + "actor_critic/actor_critic_continuous.py": lambda module: actor_critic(module, True),
    PG + "actor_critic/torch_actor_critic_discrete.py": lambda m: actor_critic(m, False),
    PG + "reinforce/reinforce_torch.py": reinforce,
}
AGENT_MODULES = {PG + "SAC/networks.py": "sac_torch"}


def body(context: drive.Context) -> None:
    relative = str(context.mutated.relative_to(context.tree))
    if relative in ("simple_cnn_mnist.py", "modular_cnn.py"):
        cnn(context)
        return
    folder = os.path.dirname(relative)
    context.import_path(folder)
    for checkpoints in ("tmp/ddpg", "tmp/td3", "tmp/sac", "tmp/ppo"):
        os.makedirs(checkpoints, exist_ok=True)
    name = AGENT_MODULES.get(relative, Path(relative).stem)
    module = __import__(name)
    AGENTS[relative](module)


drive.main(body)
