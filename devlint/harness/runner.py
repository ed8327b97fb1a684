"""Runs programs in parallel, each in its own process group, killed at its timeout.

Importing torch costs seconds, so processes are forked from a server that has
imported it once (``devlint.harness.zygote``). Each process then behaves like
``python SCRIPT``: its own session, working folder, environment and output
files. Nothing here imports torch.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devlint.harness.launch import package_path
from devlint.harness.report import RunReport, combine, read_reports
from devlint.harness.termination import interruptible

TAIL = 4000


@dataclass(frozen=True)
class Job:
    script: Path
    backend: str
    gpus: int
    args: tuple[str, ...] = ()
    key: Any = None
    """The caller's name for the job, handed back with its result."""
    threads: int | None = None
    """torch's intra-op threads; default: the job's share of the CPUs."""


@dataclass
class Result:
    job: Job
    exit_status: int | None
    timed_out: bool
    seconds: float
    stdout: str
    stderr: str
    report: RunReport = field(repr=False)


def run_jobs(
    jobs: Sequence[Job],
    parallel: int,
    timeout: float,
    on_done: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Run every job, ``parallel`` at a time; results in the order of ``jobs``."""
    workdir = Path(tempfile.mkdtemp(prefix="devlint-harness-"))
    threads = max(1, (os.cpu_count() or 1) // max(1, min(parallel, len(jobs) or 1)))
    specs = [
        _spec(job, index, workdir / str(index), job.threads or threads)
        for index, job in enumerate(jobs)
    ]
    results: dict[int, Result] = {}
    waiting = list(range(len(jobs)))
    started: dict[int, tuple[int, float]] = {}  # job index -> (pid, start time)
    zygote = None
    try:
        zygote = Zygote()
        while waiting or started:
            while waiting and len(started) < parallel:
                index = waiting.pop(0)
                zygote.send(specs[index])
                started[index] = (zygote.wait_started(index), time.monotonic())
            exits = zygote.exits(0.2)
            now = time.monotonic()
            for index, (pid, began) in list(started.items()):
                late = index not in exits and now - began > timeout
                if late:
                    _kill(pid)
                    exits[index] = zygote.wait_exit(index)
                if index in exits:
                    del started[index]
                    results[index] = _result(
                        jobs[index], specs[index], exits[index], late, now - began
                    )
                    if on_done is not None:
                        on_done(results[index])
    finally:
        for pid, _ in started.values():
            _kill(pid)
        if zygote is not None:
            zygote.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return [results[index] for index in range(len(jobs))]


class Zygote:
    """The fork server process (``devlint.harness.zygote``) and its line protocol."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "devlint.harness.zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": package_path()},
            start_new_session=True,  # a Ctrl-C reaches devlint alone, which closes it in order
        )
        self._buffer = b""
        self._ready = False
        self._started: dict[int, int] = {}
        self._exited: dict[int, int] = {}
        try:
            self._read_until(lambda: self._ready, None)
        except BaseException:  # it failed, or devlint was told to end while torch loaded
            self.close()
            raise

    def send(self, spec: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(spec).encode() + b"\n")
        self.process.stdin.flush()

    def wait_started(self, index: int) -> int:
        self._read_until(lambda: index in self._started, None)
        return self._started[index]

    def wait_exit(self, index: int) -> int:
        self._read_until(lambda: index in self._exited, 30.0)
        return self._exited.pop(index, -9)

    def exits(self, seconds: float) -> dict[int, int]:
        """Jobs that ended, waiting up to ``seconds`` for the first one."""
        if not self._exited:
            self._read_until(lambda: bool(self._exited), seconds)
        found, self._exited = self._exited, {}
        return found

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()

    def _read_until(self, done: Callable[[], bool], seconds: float | None) -> None:
        """Read protocol lines until ``done()``, or for at most ``seconds``."""
        assert self.process.stdout is not None
        deadline = None if seconds is None else time.monotonic() + seconds
        fd = self.process.stdout.fileno()
        while not done():
            if b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                self._take(line.decode())
                continue
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            with interruptible():
                readable = select.select([fd], [], [], left)[0]
            if not readable:
                return
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise RuntimeError("the harness's fork server stopped (is torch installed?)")
            self._buffer += chunk

    def _take(self, line: str) -> None:
        word, *rest = line.split()
        if word == "ready":
            self._ready = True
        elif word == "started":
            self._started[int(rest[0])] = int(rest[1])
        elif word == "exited":
            self._exited[int(rest[0])] = int(rest[1])


def _spec(job: Job, index: int, folder: Path, threads: int) -> dict[str, Any]:
    folder.mkdir(parents=True)
    return {
        "id": index,
        "script": str(job.script),
        "args": list(job.args),
        "backend": job.backend,
        "gpus": job.gpus,
        "report": str(folder / "reports"),
        "stdout": str(folder / "stdout"),
        "stderr": str(folder / "stderr"),
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "threads": threads,
    }


def _kill(pid: int) -> None:
    """Kill the example and everything it started (its own process group)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError):
            continue


def _result(job: Job, spec: dict[str, Any], status: int | None, late: bool, seconds: float):
    return Result(
        job=job,
        exit_status=status,
        timed_out=late,
        seconds=seconds,
        stdout=_tail(spec["stdout"]),
        stderr=_tail(spec["stderr"]),
        report=combine(read_reports(spec["report"])),
    )


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as file:
            file.seek(0, os.SEEK_END)
            file.seek(max(0, file.tell() - TAIL))
            return file.read().decode("utf-8", "replace")
    except OSError:
        return ""


def cuda_device_count() -> int:
    """How many real GPUs torch sees here (0 without torch or CUDA), asked in a forked process."""
    with tempfile.TemporaryDirectory(prefix="devlint-probe-") as folder:
        answer = Path(folder) / "count"
        probe = Path(folder) / "probe.py"
        probe.write_text(
            "import pathlib, sys, torch\n"
            "count = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
            f"pathlib.Path({str(answer)!r}).write_text(str(count))\n"
        )
        try:
            run_jobs([Job(probe, "none", 0)], 1, 120)
            return int(answer.read_text())
        except (OSError, ValueError, RuntimeError):
            return 0
