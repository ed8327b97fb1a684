"""``devlint run`` and ``devlint confirm`` told to end (SIGTERM, SIGHUP, a Ctrl-C): the program
and every process it started end, the temporary folders go, and the exit status is 128 + the
signal's number (needs torch)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs torch programs or installs packages (docs/testing.md)

ROOT = Path(__file__).resolve().parent.parent

SLEEPER = """\
import os
import pathlib
import signal
import subprocess
import sys
import time

{setup}
helper = subprocess.Popen(["sleep", "600"])
pathlib.Path({pids!r}).write_text(f"{{os.getpid()}} {{helper.pid}}")
time.sleep(600)
"""
"""A program that starts a helper process, says both pids, and sleeps."""


def start_devlint(args: list[str], tmp_path: Path, python_path: Path = ROOT) -> subprocess.Popen:
    """``devlint ARGS`` with its temporary folders in ``tmp_path/tmp`` and its output in
    ``tmp_path/output`` (a pipe would stay open as long as a process left behind holds it)."""
    env = {**os.environ, "PYTHONPATH": str(python_path), "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    with open(tmp_path / "output", "wb") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "devlint", *args],
            cwd=tmp_path,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            preexec_fn=_default_signal_handling,
        )


def _default_signal_handling() -> None:
    """In devlint's process, before it starts: the signals as an interactive shell leaves
    them. Under ``nohup`` or in a background job the tests inherit SIGHUP or SIGINT ignored,
    which devlint rightly keeps ignoring (``termination.ends_on_signals``)."""
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(number, signal.SIG_DFL)


def program_pids(pids: Path, devlint: subprocess.Popen) -> list[int]:
    """The program's and its helper's pids, once the program has started them."""
    deadline = time.monotonic() + 300
    while not pids.exists() or len(pids.read_text().split()) < 2:
        if devlint.poll() is not None or time.monotonic() > deadline:
            devlint.kill()
            output = (pids.parent / "output").read_text(errors="replace")
            pytest.fail(f"the program never started:\n{output}")
        time.sleep(0.1)
    return [int(pid) for pid in pids.read_text().split()]


def end(devlint: subprocess.Popen, number: int, program: list[int], tmp_path: Path):
    """Send ``number`` to devlint; then its exit status, the program's processes still
    running, and devlint's temporary folders left behind."""
    devlint.send_signal(number)
    devlint.wait(timeout=120)
    left = still_running(program)
    return devlint.returncode, left, [path.name for path in (tmp_path / "tmp").glob("devlint-*")]


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie nobody reaped yet has ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rpartition(")")[2].split()[0] == "Z")


def still_running(pids: list[int]) -> list[int]:
    """Those of ``pids`` still running after a generous wait for them to end."""
    deadline = time.monotonic() + 60
    while any(map(running, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in pids if running(pid)]
    for pid in left:  # do not leave them behind when the test fails
        os.kill(pid, signal.SIGKILL)
    return left


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_run_told_to_end_ends_the_program_and_removes_its_folder(tmp_path, number):
    pids = tmp_path / "pids"
    (tmp_path / "sleeper.py").write_text(SLEEPER.format(setup="", pids=str(pids)))
    devlint = start_devlint(["run", "sleeper.py"], tmp_path)
    program = program_pids(pids, devlint)
    assert end(devlint, number, program, tmp_path) == (128 + number, [], [])


def test_a_program_that_ignores_sigterm_is_killed(tmp_path):
    pids = tmp_path / "pids"
    ignoring = "signal.signal(signal.SIGTERM, signal.SIG_IGN)"  # its helper inherits it
    (tmp_path / "stubborn.py").write_text(SLEEPER.format(setup=ignoring, pids=str(pids)))
    devlint = start_devlint(["run", "stubborn.py"], tmp_path)
    program = program_pids(pids, devlint)
    assert end(devlint, signal.SIGTERM, program, tmp_path) == (128 + signal.SIGTERM, [], [])


def test_confirm_told_to_end_ends_the_examples_and_removes_its_folder(tmp_path):
    """A copy of devlint whose only example of DVL101 is a program that sleeps."""
    copy = tmp_path / "copy"
    shutil.copytree(
        ROOT / "devlint", copy / "devlint", ignore=shutil.ignore_patterns("__pycache__")
    )
    pids = tmp_path / "pids"
    rule = copy / "rules" / next((ROOT / "rules").glob("DVL101-*")).name
    rule.mkdir(parents=True)
    (rule / "bad.py").write_text(SLEEPER.format(setup="", pids=str(pids)))
    devlint = start_devlint(["confirm", "DVL101", "--backend", "emulated"], tmp_path, copy)
    program = program_pids(pids, devlint)
    assert end(devlint, signal.SIGTERM, program, tmp_path) == (128 + signal.SIGTERM, [], [])
