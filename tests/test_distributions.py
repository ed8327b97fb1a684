"""``torch.distributions``, as reinforcement-learning code uses it (cleanrl's PPO agents,
found missing by the mutation benchmark, issue 12).

PyTorch's rules these cases encode: building ``Normal(loc, scale)`` or
``Categorical(logits=...)`` checks no devices; ``sample()``/``rsample()`` compute with
the parameters together and ``log_prob(value)`` computes ``value`` with them, so those
calls fail when they are on different devices; what they return lives where the
parameters are.
"""

from __future__ import annotations

import textwrap

from devlint.config import Settings
from devlint.running.engine import lint_source

AGENT = textwrap.dedent(
    """\
    import torch
    from torch import nn
    from torch.distributions import Normal
    from torch.distributions.categorical import Categorical

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


    class Agent(nn.Module):
        def __init__(self):
            super().__init__()
            self.actor_mean = nn.Linear(4, 2)
            self.actor_logstd = nn.Parameter(torch.zeros(1, 2))
            self.actor = nn.Linear(4, 3)

        def continuous(self, x, action=None):
            action_mean = self.actor_mean(x)
            action_std = torch.exp(self.actor_logstd.expand_as(action_mean))
            probs = Normal(action_mean, action_std)
            if action is None:
                action = probs.sample()
            return action, probs.log_prob(action).sum(1), probs.entropy().sum(1)

        def discrete(self, x, action=None):
            probs = Categorical(logits=self.actor(x))
            if action is None:
                action = probs.sample()
            return action, probs.log_prob(action), probs.entropy()


    agent = Agent().to(device)
    obs = torch.zeros(5, 4).to(device)
    """
)


def findings(agent: str, use: str) -> list[tuple[str, int, str]]:
    found = lint_source(agent + textwrap.dedent(use), "agent.py", Settings())
    return [(f.code, f.line, f.message) for f in found if f.code >= "DVL1"]


def codes(use: str) -> list[tuple[str, int]]:
    return [(code, line) for code, line, _ in findings(AGENT, use)]


def test_the_agent_as_written_is_clean():
    source = """\
    actions = torch.zeros(5).to(device)
    logprobs = torch.zeros(5).to(device)
    _, newlogprob, entropy = agent.discrete(obs, actions.long())
    logratio = newlogprob - logprobs
    _, newlogprob, entropy = agent.continuous(obs, torch.zeros(5, 2).to(device))
    print(logratio, newlogprob - logprobs, entropy.mean())
    """
    assert codes(source) == []


def test_what_a_distribution_gives_lives_where_its_parameters_are():
    # the log-probabilities are on the agent's device, the stored ones were left on the cpu
    source = """\
    logprobs = torch.zeros(5)
    _, newlogprob, _ = agent.discrete(obs)
    print(newlogprob - logprobs)
    """
    assert codes(source) == [("DVL101", 35)]


def test_a_value_on_another_device_meets_the_parameters_in_log_prob():
    # the actions given were left on the cpu: `log_prob` fails, the sampling path is not taken
    source = """\
    actions = torch.zeros(5)
    print(agent.discrete(obs, actions.long()))
    """
    assert codes(source) == [("DVL103", 28)]


def test_parameters_on_different_devices_meet_when_sampling():
    # the log-std as a plain attribute stays on the cpu when the agent moves
    agent = AGENT.replace("nn.Parameter(torch.zeros(1, 2))", "torch.zeros(1, 2)")
    [(code, line, message)] = findings(agent, "print(agent.continuous(obs))\n")
    assert (code, line) == ("DVL104", 21)
    assert message.startswith("`action_std` is on cpu")
    assert "but `action_mean` is on" in message
