"""Idioms that decide where a module's state and a tensor live, found missing by the
mutation benchmark (issue 12): each program is correct as written, and each broken
variant fails on a GPU; the analysis must see both.

PyTorch's rules these cases encode: ``Module.to()`` moves registered state only
(an override of ``to()`` moves what it moves); ``a.type_as(b)`` is
``a.to(b.options())``, device included; ``copy.deepcopy`` keeps devices; a legacy
constructor (``torch.FloatTensor(x)``) rejects a number, so only a 0-d array gives a
0-dim tensor (the cpu 0-dim exception); a module whose ``__init__`` ends with
``self.to(self.device)`` for a device it chose itself is on that device.
"""

from __future__ import annotations

import textwrap

import pytest
from test_analysis import PRELUDE, revealed

from devlint.config import Settings
from devlint.core.lattice import CPU, MODULE_DEVICE, Symbol
from devlint.running.engine import lint_source


def codes(source: str) -> list[tuple[str, int]]:
    found = lint_source(textwrap.dedent(source), "example.py", Settings())
    return [(f.code, f.line) for f in found if f.code >= "DVL1"]


WRAPPERS = """\
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def forward(self, x):
            return self.lin(x)

    class Residual(nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, x):
            return self.fn(x) + x

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = CONTAINER([])
            self.layers.append(Residual(WRAPPED))

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x
    """


def test_empty_list_call_is_an_empty_list() -> None:
    """``self.layers = list()`` grown by ``append``: modules in a plain list."""
    source = WRAPPERS.replace("Residual(WRAPPED)", "Block()")
    assert codes(source.replace("CONTAINER([])", "list()")) == [("DVL104", 27)]
    assert codes(source.replace("CONTAINER([])", "nn.ModuleList()")) == []


def test_a_wrapper_given_a_stateful_module_owns_state() -> None:
    """``Residual(Block())`` in a plain list: the block's weights stay on the cpu."""
    plain = WRAPPERS.replace("CONTAINER", "list")
    assert codes(plain.replace("WRAPPED", "Block()")) == [("DVL104", 27)]
    # a wrapper of a stateless module owns nothing: no device to disagree with
    assert codes(plain.replace("WRAPPED", "nn.ReLU()")) == []
    registered = WRAPPERS.replace("CONTAINER", "nn.ModuleList")
    assert codes(registered.replace("WRAPPED", "Block()")) == []


def test_type_as_moves_to_the_other_tensor() -> None:
    body = (
        "class M(nn.Module):\n    def forward(self, x):\n        reveal(torch.ones(2).type_as(x))"
    )
    assert revealed(PRELUDE + body) == MODULE_DEVICE


def test_deepcopy_keeps_the_device() -> None:
    body = "import copy\nm = nn.Linear(2, 2).to(device)\nreveal(copy.deepcopy(m))"
    assert revealed(PRELUDE + body) == Symbol("device")


def test_legacy_constructor_from_data_is_not_0_dim() -> None:
    """``torch.FloatTensor(batch)`` meets a GPU tensor: not the 0-dim exception."""
    source = """\
        import torch

        def step(batch, device):
            q = torch.zeros(2, 3, device=device)
            reward = torch.FloatTensor(batch)
            return reward + q
        """
    assert ("DVL101", 6) in codes(source)
    assert codes(source.replace("torch.FloatTensor(batch)", "torch.tensor(batch)")) == []


REQUIRED_MODEL = """\
    import torch
    import torch.nn as nn

    class Sampler(nn.Module):
        def __init__(self, model: nn.Module, steps: int):
            super().__init__()
            self.model = model

        def sample(self, n, device):
            x = torch.randn(n, 3)MOVE
            return self.model(x)
    """


def test_a_required_module_argument_is_a_model_on_the_modules_device() -> None:
    assert codes(REQUIRED_MODEL.replace("MOVE", "")) == [("DVL103", 11)]
    assert codes(REQUIRED_MODEL.replace("MOVE", ".to(device)")) == []
    # a defaulted one may be a stateless criterion: nothing is assumed
    defaulted = REQUIRED_MODEL.replace("model: nn.Module,", "model: nn.Module = nn.ReLU(),")
    assert codes(defaulted.replace("MOVE", "")) == []


TO_OVERRIDE = """\
    import torch
    from torch import nn

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self.noise = torch.Tensor(2)

        def forward(self, x):
            return self.lin(x) + self.noise

        def to(self, device):
            self.noise = MOVED
            return super().to(device)
    """


@pytest.mark.parametrize(
    ("moved", "expected"),
    [
        ("self.noise.to(device)", []),  # the override moves it with the module
        ("self.noise", [("DVL104", 11)]),  # it forgot to: the noise stays on the cpu
    ],
)
def test_a_to_override_moves_what_it_moves(moved: str, expected: list) -> None:
    assert codes(TO_OVERRIDE.replace("MOVED", moved)) == expected


REINITIALISED = """\
    import copy
    import torch
    from torch import nn

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    class Agent:
        def __init__(self):
            self.actor = nn.Linear(2, 2).to(device)
            self.critic = nn.Linear(2, 1)MOVE
            self.critic_target = copy.deepcopy(self.critic)

        def train(self, state):
            return self.critic_target(self.actor(state))

        def load(self, path):
            self.critic.load_state_dict(torch.load(path, map_location=device))
            self.critic_target = copy.deepcopy(self.critic)
    """


def test_an_attribute_set_again_as_init_did_keeps_its_value() -> None:
    assert codes(REINITIALISED.replace("MOVE", "")) == [("DVL102", 14)]
    assert codes(REINITIALISED.replace("MOVE", ".to(device)")) == []
    # set to something else in `load`: unknown there, so unknown everywhere, as before
    head, _, tail = REINITIALISED.rpartition("copy.deepcopy(self.critic)")
    assert codes((head + "build()" + tail).replace("MOVE", "")) == []


def test_cpu_is_still_the_only_default() -> None:
    assert revealed(PRELUDE + "reveal(torch.FloatTensor([1.0]))") == CPU


TYPED_WRAPPER = """\
    import torch

    class Wrapper(torch.nn.Module):
        def __init__(self, module: torch.nn.Module, properties):
            super().__init__()
            self.module = module

        def forward(self, x, context):
            return self.module(x)

    class Identity(torch.nn.Module):
        def forward(self, x):
            return x

    def run(device):
        wrapper = Wrapper(WRAPPED, 3)
        return wrapper(torch.ones(2, device=device), None)
    """


def test_a_wrapper_typed_for_a_model_owns_only_what_it_is_given() -> None:
    """speechbrain's StreamingFeatureWrapper(DummySumModule(), props): a `module:
    nn.Module` parameter is assumed to be a model until a call says otherwise."""
    assert codes(TYPED_WRAPPER.replace("WRAPPED", "Identity()")) == []
    assert codes(TYPED_WRAPPER.replace("WRAPPED", "torch.nn.Linear(2, 2)")) == [("DVL102", 17)]


REPLACED_WEIGHT = """\
    import torch

    class Linear(torch.nn.Module):
        def __init__(self, size):
            super().__init__()
            self.w = torch.nn.Linear(size, size, bias=False)

        def forward(self, x):
            return self.w(x)

    def test_linear(device):
        inputs = torch.rand(1, 4, device=device)
        layer = Linear(4)
        REPLACE
        return layer(inputs)
    """


def test_a_module_given_parameters_from_elsewhere_is_on_an_unknown_device() -> None:
    """speechbrain's test_linear: `lin.w.weight = nn.Parameter(torch.eye(n, device=d))`."""
    replaced = "layer.w.weight = torch.nn.Parameter(torch.eye(4, device=device))"
    assert codes(REPLACED_WEIGHT.replace("REPLACE", replaced)) == []
    assert codes(REPLACED_WEIGHT.replace("REPLACE", "layer.name = 'w'")) == [("DVL102", 15)]


LOCATED_FORWARD = """\
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3)

        def forward(self, x, locations):
            return self.conv(x)[:, :, int(locations[0][0]):]

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = Net().to(device)
    locations = torch.zeros(1, 4)
    face = torch.zeros(1, 3, 8, 8)
    net(FACE, locations)
    """


def test_a_visible_module_takes_as_inputs_what_its_forward_does() -> None:
    """BasicSR's DFDNet: `net(face, part_locations)` with the locations on the cpu used as
    numbers in forward; they are not inputs that live on the module's device."""
    assert codes(LOCATED_FORWARD.replace("FACE", "face.to(device)")) == []
    assert codes(LOCATED_FORWARD.replace("FACE", "face")) == [("DVL102", 16)]


CRITIC = """\
    import torch
    from torch import nn

    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(4, 1)

        def forward(self, state, action):
            return self.l1(torch.cat([state, action], 1))

    def update(critic, replay_buffer, device):
        state = replay_buffer.sample()
        action = torch.zeros(2, 2, device=device)
        return critic(state, action)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    update(CRITIC, None, device)
    """


def test_a_later_argument_its_forward_uses_as_a_tensor_is_an_input() -> None:
    """sfujim/TD3 (a mutant): `critic_target(next_state, next_action)` with the critic left on
    the cpu; forward concatenates both arguments, so the second is an input too."""
    assert codes(CRITIC.replace("CRITIC", "Critic().to(device)")) == []
    assert codes(CRITIC.replace("CRITIC", "Critic()")) == [("DVL102", 15)]


SELF_PLACING = """\
    import numpy as np
    import torch as T
    import torch.nn as nn

    class Actor(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc1 = nn.Linear(n, 4)
            self.device = T.device("cuda:0" if T.cuda.is_available() else "cpu")
            self.to(self.device)

        def forward(self, state):
            return self.fc1(state)

    class Agent:
        def __init__(self, n):
            self.actor = Actor(n)

        def choose_action(self, observation):
            state = T.tensor(observation, dtype=T.float)SELF_MOVE
            return self.actor.forward(state)

    actor = Actor(3)
    y = actor(T.tensor(np.zeros(3), dtype=T.float)MOVE)
    """


def test_a_module_that_places_itself_in_init_is_on_that_device() -> None:
    # the RL tutorials' networks: `self.to(self.device)` with a device chosen in `__init__`
    # `self.actor.forward(state)` runs forward on the placed actor: the cpu `state` made at
    # line 20 meets `self.fc1` there
    unmoved = SELF_PLACING.replace("SELF_MOVE", "").replace("MOVE", "")
    assert codes(unmoved) == [("DVL103", 13), ("DVL102", 24)]
    moved = SELF_PLACING.replace("SELF_MOVE", ".to(self.actor.device)")
    assert codes(moved.replace("MOVE", ".to(actor.device)")) == []


def test_a_module_placed_on_a_device_it_is_given_stays_where_its_caller_says() -> None:
    given = SELF_PLACING.replace(
        "def __init__(self, n):\n        super()",
        "def __init__(self, n, device=None):\n        super()",
    )
    given = given.replace('T.device("cuda:0" if T.cuda.is_available() else "cpu")', "device")
    assert "self.device = device" in given
    assert codes(given.replace("SELF_MOVE", "").replace("MOVE", "")) == []


def test_a_module_that_picks_one_of_two_gpus_is_on_a_gpu() -> None:
    # philtabor's DDPG networks: `T.device("cuda:0" if T.cuda.is_available() else "cuda:1")`
    # is a GPU either way, so a CPU tensor fed to the module fails wherever it runs
    two_gpus = SELF_PLACING.replace('else "cpu"', 'else "cuda:1"')
    assert 'else "cuda:1"' in two_gpus
    source = textwrap.dedent(two_gpus.replace("SELF_MOVE", "").replace("MOVE", ""))
    found = lint_source(source, "example.py", Settings())
    assert [(f.code, f.line, f.severity.value) for f in found] == [
        ("DVL103", 13, "error"),
        ("DVL102", 24, "error"),
    ]
    assert "is on cuda (moved to `self.device` at line 10)" in found[0].message


ROLLOUT_STORAGE = """\
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    values = torch.zeros((8, 2))MOVE
    rewards = torch.zeros(8, 2).to(device)
    flat = torch.zeros(8)
    for t in reversed(range(8)):
        delta = rewards[t] - values[t]
        step = rewards[t] - flat[t]
    """


def test_an_element_of_a_tensor_with_two_dimensions_still_has_one() -> None:
    # cleanrl's rollout storage: `values[t]` of a (steps, envs) tensor is no 0-dim operand,
    # while `flat[t]` of a one-dimensional one may be (PyTorch lets a cpu 0-dim one join)
    assert codes(ROLLOUT_STORAGE.replace("MOVE", "")) == [("DVL101", 8)]
    assert codes(ROLLOUT_STORAGE.replace("MOVE", ".to(device)")) == []


ROLLOUT_LOOP = """\
    import torch
    from torch import nn

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    agent = nn.Linear(4, 2).to(device)
    next_obs = torch.Tensor(reset()).to(device)
    for step in range(8):
        action = agent(next_obs)
        next_obs = torch.Tensor(act(action.cpu().numpy()))MOVE
    """


def test_what_an_iteration_leaves_behind_meets_the_model_on_the_next() -> None:
    # cleanrl's rollouts: the observation the environment returns replaces the moved one at
    # the end of the body; the first iteration is fine, the second fails
    assert codes(ROLLOUT_LOOP.replace("MOVE", "")) == [("DVL102", 8)]
    assert codes(ROLLOUT_LOOP.replace("MOVE", ".to(device)")) == []
    replaced_first = ROLLOUT_LOOP.replace(
        "        action = agent(next_obs)",
        "        next_obs = next_obs.to(device)\n        action = agent(next_obs)",
    )
    assert codes(replaced_first.replace("MOVE", "")) == []


OPTIONAL_BIAS = """\
    import torch


    def linear_op(input, weight, bias):
        output = torch.matmul(input, weight)
        return output + bias


    class ComplexLinear(torch.nn.Module):
        def __init__(self, n, bias=True):
            super().__init__()
            self.w = torch.nn.Parameter(torch.Tensor(n, n))
            if bias:
                self.b = torch.nn.Parameter(torch.Tensor(n))
            else:
                self.b = torch.Tensor(n).requires_grad_(False)

        def forward(self, x):
            return linear_op(x, self.w, self.b)
    """


def test_a_parameter_or_a_frozen_placeholder_is_where_the_configuration_puts_it() -> None:
    # speechbrain's complex and quaternion layers: a parameter, or without a bias (or
    # outside spinor mode) a frozen placeholder; the ops use it only where it is the
    # parameter (`if bias.requires_grad:`, `if self.spinor:`), which the analysis cannot see
    assert codes(OPTIONAL_BIAS) == []
    plain = OPTIONAL_BIAS.replace(
        "self.b = torch.nn.Parameter(torch.Tensor(n))", "self.b = torch.zeros(n)"
    )
    assert codes(plain) == [("DVL104", 6)]
    # latent-diffusion's logvar: a plain tensor, a parameter only when learned; the plain
    # one is used as it is by default, so it is still reported
    unfrozen = OPTIONAL_BIAS.replace(".requires_grad_(False)", "")
    assert codes(unfrozen) == [("DVL104", 6)]


ALIASED_MODEL = """\
    import torch
    from torch import nn

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


    def build():
        return nn.Linear(2, 2)


    model = build()
    OTHER = build()
    policy = model
    policy.to(device)
    print(OTHER(torch.zeros(1, 2, device=device)))
    """


def test_a_module_moved_through_another_name_is_moved() -> None:
    # LLMs-from-scratch's DPO notebook: `policy_model = model; policy_model.to(device)`,
    # then `generate(model=model, ...)`: `.to()` moved the one module both names hold
    assert codes(ALIASED_MODEL.replace("OTHER", "model")) == []
    # two calls of the same builder are two modules: moving one leaves the other
    assert codes(ALIASED_MODEL.replace("OTHER", "reference")) == [("DVL102", 15)]


CONSTRUCTION_HELPERS = """\
    import numpy as np
    import torch as T
    from torch import nn
    from torchvision.datasets import MNIST


    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.device = T.device("cuda:0" if T.cuda.is_available() else "cpu")
            self.conv1 = nn.Conv2d(1, 8, 3)
            self.fc1 = nn.Linear(self.calc_input_dims(), 10)
            self.loss = nn.CrossEntropyLoss()
            self.to(self.device)
            self.get_data()

        def calc_input_dims(self):
            batch_data = T.zeros((1, 1, 28, 28))
            return int(np.prod(self.conv1(batch_data).size()))

        def get_data(self):
            self.train_data_loader = T.utils.data.DataLoader(MNIST("mnist"), batch_size=8)

        def forward(self, batch_data):
            return self.fc1(self.conv1(batch_data.to(self.device)).flatten(1))

        def _train(self):
            for input, label in self.train_data_loader:
                label = label.to(self.device)
                loss = self.loss(self.forward(input), label)
                loss.backward()
    """


def test_methods_only_init_calls_run_on_the_module_being_built():
    # philtabor's MNIST CNNs: the dummy pass in `calc_input_dims` runs in `__init__`, before
    # the move, where the new layers are on the cpu; the loader `get_data` sets is a loader
    assert codes(CONSTRUCTION_HELPERS) == []
    unmoved = CONSTRUCTION_HELPERS.replace("label = label.to(self.device)", "pass")
    assert codes(unmoved) == [("DVL301", 30)]


def test_a_model_wrapped_on_both_paths_is_a_wrapper_either_way():
    # pix2pixHD's train.py: DataParallel after amp on one path, from create_model on the other
    source = """\
        import torch
        from torch import nn

        model = nn.Linear(2, 2)
        if torch.cuda.device_count() > 4:
            model = nn.DataParallel(model, device_ids=[0, 1])
        else:
            model = nn.DataParallel(model)
        model.save("latest")
        """
    assert codes(source) == [("DVL401", 9)]


def test_a_conditional_expression_on_the_wrapper_reads_the_model_on_its_other_side():
    # SlowFast's test_net.py: `model.module.train_labels if hasattr(model, "module") else
    # model.train_labels`; only a read of the wrapper on the wrapped side is the bug
    source = """\
        import torch
        from torch import nn

        model = nn.Linear(2, 2)
        if torch.cuda.device_count() > 1:
            model = nn.DataParallel(model)
        a = model.module.labels if hasattr(model, "module") else model.labels
        b = model.labels if not hasattr(model, "module") else model.module.labels
        c = model.labels if hasattr(model, "module") else None
        """
    assert codes(source) == [("DVL401", 9)]


FORWARD_BY_NAME = """\
    import torch as T
    from torch import nn

    class Network(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)
            self.device = T.device("cuda:0" if T.cuda.is_available() else "cuda:1")
            SELF_MOVE

        def forward(self, observation):
            state = T.tensor(observation, dtype=T.float).to(self.device)
            return self.fc(state)

    class Agent:
        def __init__(self):
            self.actor = Network()

        def choose_action(self, observation):
            return self.actor.forward(observation)
    """


def test_forward_called_by_name_runs_on_the_instance_the_caller_has():
    # philtabor's actor-critic agents call `self.actor.forward(obs)`; the network moves
    # each observation to its own GPU, so the network itself must be there too
    assert codes(FORWARD_BY_NAME.replace("SELF_MOVE", "self.to(self.device)")) == []
    assert codes(FORWARD_BY_NAME.replace("SELF_MOVE", "pass")) == [("DVL102", 13)]


def test_a_subclass_of_a_torch_layer_with_weights_owns_state():
    # hyunwoongko's `class TokenEmbedding(nn.Embedding)`: what it returns is on the
    # module's device, so the layers of a plain list it feeds stay behind on the cpu
    source = """\
        from torch import nn

        class TokenEmbedding(nn.Embedding):
            def __init__(self, vocab, dim):
                super().__init__(vocab, dim, padding_idx=1)

        class Decoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = TokenEmbedding(10, 4)
                self.layers = LAYERS

            def forward(self, tokens):
                x = self.emb(tokens)
                for layer in self.layers:
                    x = layer(x)
                return x
        """
    assert codes(source.replace("LAYERS", "nn.ModuleList([nn.Linear(4, 4)])")) == []
    assert codes(source.replace("LAYERS", "[nn.Linear(4, 4)]")) == [("DVL104", 16)]
