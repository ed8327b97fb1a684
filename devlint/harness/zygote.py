"""The fork server: imports torch once, then forks one process per program it is sent.

``python -m devlint.harness.zygote`` reads one JSON spec per line on stdin and
answers ``started ID PID`` and ``exited ID STATUS`` on stdout. It is single
threaded, so a fork never copies a lock another thread holds. Closing its stdin
ends it (and whatever it still runs).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys


def main() -> None:
    import devlint.harness.preload  # noqa: F401 - the point of this process
    from devlint.harness.launch import run_child

    channel = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)  # a child's stray write must not corrupt the protocol
    channel.write("ready\n")
    children: dict[int, str] = {}
    pending, open_ = b"", True
    while open_ or children:
        if open_ and select.select([0], [], [], 0.05)[0]:
            chunk = os.read(0, 1 << 16)
            open_ = bool(chunk)
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in filter(None, lines):
                spec = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    os.dup2(devnull, 0)
                    channel.close()
                    run_child(spec)  # never returns
                children[pid] = spec["id"]
                channel.write(f"started {spec['id']} {pid}\n")
        elif not open_:
            for pid in children:
                _kill_group(pid)
            select.select([], [], [], 0.05)
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            job = children.pop(pid, None)
            if job is not None:
                channel.write(f"exited {job} {os.waitstatus_to_exitcode(status)}\n")


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main())
