"""sfujim/TD3: main.py for TD3, DDPG and OurDDPG on a tiny synthetic environment (exploration,
training steps, evaluations, a saved model), then again from the saved model."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import drive

SMALL = ["--env", "Tiny", "--start_timesteps", "3", "--eval_freq", "6", "--batch_size", "4"]


def body(context: drive.Context) -> None:
    drive.fake_gym()
    for policy in ("TD3", "DDPG", "OurDDPG"):
        for module in ("utils", "TD3", "DDPG", "OurDDPG"):
            sys.modules.pop(module, None)
        options = ["--policy", policy, *SMALL]
        drive.run_script(
            context.path("main.py"), [*options, "--max_timesteps", "6", "--save_model"]
        )
        drive.run_script(
            context.path("main.py"), [*options, "--max_timesteps", "4", "--load_model", "default"]
        )


drive.main(body)
