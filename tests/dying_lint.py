"""Lint and fix functions whose process dies on marked files, for the worker-crash tests.

``lint_or_die`` stands in for ``devlint.frontends.cli.lint_file``, ``fix_or_die``
for ``devlint.running.fix.fix_file``: a file holding a line ``# die: SIGSEGV`` (or
any other signal's name) makes the process send itself that signal, the way
a crash in LibCST's native parser (SIGSEGV) or the OOM killer (SIGKILL) ends
a worker; ``# die: exit 3`` ends it with ``os._exit(3)``. Any other file is
linted or fixed as usual.

They are module-level functions, so a worker process imports them by name
however it was started (fork, forkserver or spawn). Each call appends
``<file name> lint`` (or ``fix``) to the file named by ``$DYING_LINT_LOG``, if
set, before doing anything else: the tests count the attempts. They refuse to kill the process
that first imported this module (the test run) and raise instead.
"""

from __future__ import annotations

import faulthandler
import os
import re
import resource
import signal
from pathlib import Path

from devlint.config import Settings
from devlint.diagnostic import Diagnostic
from devlint.frontends.cli import lint_file
from devlint.inputs.result_cache import Linted
from devlint.inputs.tree_cache import TreeCache
from devlint.running.fix import FixResult, fix_file

LOG_ENV = "DYING_LINT_LOG"
_PARENT_ENV = "DYING_LINT_PARENT"
os.environ.setdefault(_PARENT_ENV, str(os.getpid()))  # inherited by every worker
_MARKER = re.compile(rb"^# die: (\w+)(?: (\d+))?$", re.MULTILINE)


def lint_or_die(path: Path, settings: Settings, trees: TreeCache | None = None) -> Linted:
    _die_if_marked(path, "lint")
    return lint_file(path, settings, trees)


def fix_or_die(
    path: Path,
    settings: Settings,
    *,
    unsafe: bool,
    reported: dict[str, list[Diagnostic]] | None = None,
) -> FixResult:
    _die_if_marked(path, "fix")
    linted = reported.get(str(path)) if reported is not None else None
    return fix_file(path, settings, unsafe=unsafe, write=False, linted=linted)


def _die_if_marked(path: Path, doing: str) -> None:
    """Log the attempt, then end this process the way the file's marker says, if it has one."""
    log = os.environ.get(LOG_ENV)
    if log:
        with open(log, "a", encoding="utf-8") as stream:
            stream.write(f"{path.name} {doing}\n")
    marker = _MARKER.search(path.read_bytes())
    if marker is None:
        return
    if str(os.getpid()) == os.environ[_PARENT_ENV]:
        raise RuntimeError(f"{path.name} would kill the test run: handle it in a worker process")
    faulthandler.disable()  # pytest's faulthandler would print a traceback
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # and no core file
    how, status = marker[1].decode(), marker[2]
    if how == "exit":
        os._exit(int(status or 1))
    os.kill(os.getpid(), getattr(signal, how))
    raise AssertionError(f"still alive after {how}")
