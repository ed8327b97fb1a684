"""pranz24/pytorch-soft-actor-critic: main.py on a tiny synthetic environment with the Gaussian
policy (entropy tuned automatically) and the deterministic one, through an evaluation; then a
checkpoint saved, loaded and acted on."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive


class _Writer:
    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def add_scalar(self, *args: object, **kwargs: object) -> None:
        pass


SMALL = ["--cuda", "--num_steps", "11", "--start_steps", "4", "--batch_size", "3"]
SMALL += ["--hidden_size", "8", "--replay_size", "100"]


def body(context: drive.Context) -> None:
    drive.fake_gym(episode=1)
    drive.stub_module("torch.utils.tensorboard", SummaryWriter=_Writer)
    for policy in (["--automatic_entropy_tuning", "True"], ["--policy", "Deterministic"]):
        for module in ("sac", "model", "utils", "replay_memory"):
            sys.modules.pop(module, None)
        script = drive.run_script(context.path("main.py"), [*SMALL, *policy])
        agent, state = script["agent"], script["state"]
        agent.save_checkpoint("Tiny", ckpt_path="checkpoint")
        agent.load_checkpoint("checkpoint", evaluate=True)
        agent.select_action(state, evaluate=True)


drive.main(body)
