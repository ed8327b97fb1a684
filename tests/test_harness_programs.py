"""``devlint run`` of whole programs as users write them: weight tying, DDP over spawned ranks.

The programs live in tests/programs/. Each DDP rank is a process ``torch.multiprocessing.spawn``
starts with the spawn method (a fresh interpreter), so the emulator must install itself there;
the ranks rendezvous on 127.0.0.1 with bounded timeouts.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from devlint.harness.launch import is_resource_tracker

pytestmark = pytest.mark.slow  # runs torch programs or installs packages (docs/testing.md)

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = Path(__file__).resolve().parent / "programs"
HARNESS_FILE_ERROR = "Exception ignored in atexit callback"


def devlint_run(script: Path, gpus: int, *args: str, cwd: Path = ROOT):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "devlint", "run", "--gpus", str(gpus), str(script), "--", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def assert_clean(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stderr[-3000:]
    assert "no device error" in result.stderr
    assert HARNESS_FILE_ERROR not in result.stderr and "FileNotFoundError" not in result.stderr


def test_a_gpt_with_tied_embeddings_trains_on_one_emulated_gpu():
    result = devlint_run(PROGRAMS / "gpt_tied_embeddings.py", 1)
    assert_clean(result)
    assert "step 1: loss" in result.stdout


def test_ddp_spawned_with_nccl_and_cuda_rank_devices_runs_clean():
    assert_clean(devlint_run(PROGRAMS / "ddp_spawn.py", 2))


def test_ddp_with_a_distributed_sampler_and_a_shared_checkpoint_runs_clean():
    assert_clean(devlint_run(PROGRAMS / "ddp_sampler.py", 2))


def test_a_rank_on_the_wrong_gpu_still_reports_its_device_error():
    result = devlint_run(PROGRAMS / "ddp_spawn.py", 2, "--wrong-gpu")
    assert result.returncode == 1
    assert (
        "first device error: tests/programs/ddp_spawn.py:29: RuntimeError: Expected all tensors "
        "to be on the same device, but got mat1 is on cuda:1, different from other tensors on "
        "cuda:0"
    ) in result.stderr


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_transfers_in_multiprocessing_workers_are_in_the_report(tmp_path, method):
    program = PROGRAMS / "pool_workers.py"
    result = devlint_run(program, 1, method, str(tmp_path / "moved"))
    assert_clean(result)
    assert "moved 12" in result.stdout
    lines = program.read_text().splitlines()
    move = lines.index("    return torch.ones(n).cuda().numel()") + 1
    move_then_wait = lines.index("    moved = torch.ones(n).cuda()") + 1
    # the pool's two tasks and the Process's; the worker terminate() ended
    assert re.search(rf"pool_workers.py:{move} +3 \(112 B\) ", result.stderr), result.stderr
    assert re.search(rf"pool_workers.py:{move_then_wait} +1 \(8 B\) ", result.stderr)


def test_a_process_that_outlives_the_run_never_fails_on_the_harness_report(tmp_path):
    """A helper the program leaves behind (like multiprocessing's resource tracker) ends after
    ``devlint run`` removed its report folder: its report is dropped, not an error."""
    script = tmp_path / "leaves_a_helper.py"
    script.write_text(
        textwrap.dedent(
            """\
            import subprocess
            import sys

            HELPER = '''
            import os, time
            folder = os.environ["DEVLINT_HARNESS_REPORT"]
            print(folder, flush=True)
            for _ in range(1200):  # until devlint run removed the run's folder (at most 60 s)
                if not os.path.exists(folder):
                    break
                time.sleep(0.05)
            '''
            helper = subprocess.Popen([sys.executable, "-c", HELPER], stdout=subprocess.PIPE)
            print("report folder", helper.stdout.readline().decode().strip())
            """
        )
    )
    result = devlint_run(script, 1, cwd=tmp_path)
    assert_clean(result)
    folder = result.stdout.split("report folder ", 1)[1].strip()
    assert folder and not os.path.exists(folder)


def test_multiprocessings_resource_tracker_is_left_without_the_harness():
    tracker = [
        sys.executable,
        "-B",
        "-c",
        "from multiprocessing.resource_tracker import main;main(7)",
    ]
    assert is_resource_tracker(tracker)
    assert not is_resource_tracker([sys.executable, "-c", "import torch"])
    assert not is_resource_tracker([sys.executable, "train.py", "-c", "config.yaml"])
    assert not is_resource_tracker([sys.executable, "train.py", "-c"])
