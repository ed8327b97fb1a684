"""Runs a program under a harness backend, as ``python SCRIPT ARGS`` would, and reports on it.

``python -m devlint.harness.launch --backend emulated --gpus 2 [--report DIR] SCRIPT [ARGS...]``

The backend is installed before the script runs (``runpy``, so tracebacks name
the script's own lines), and every Python process the script starts gets the
same backend through ``_boot/sitecustomize.py``: a script that re-runs itself
with ``CUDA_VISIBLE_DEVICES=""`` meets an emulated machine without GPUs, and the
ranks ``torch.multiprocessing.spawn`` starts each see the emulated GPUs. (Not
multiprocessing's resource tracker: it runs no user code and outlives the run.)
"""

from __future__ import annotations

import argparse
import atexit
import linecache
import os
import runpy
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from devlint.harness.observe import Recorder, is_user_file
from devlint.harness.process_end import report_at_every_end
from devlint.harness.report import ProcessReport
from devlint.notebooks.program import program_of
from devlint.notebooks.reading import is_notebook, read_notebook

BACKEND_ENV = "DEVLINT_HARNESS_BACKEND"
GPUS_ENV = "DEVLINT_HARNESS_GPUS"
REPORT_ENV = "DEVLINT_HARNESS_REPORT"
BOOT = Path(__file__).resolve().parent / "_boot"
BACKENDS = ("emulated", "cuda")
RESOURCE_TRACKER = "from multiprocessing.resource_tracker import"


@dataclass
class Session:
    """One process running under a backend."""

    backend: str
    report_dir: str | None
    main: bool
    recorder: Recorder
    exception: dict[str, Any] | None = None
    finished: bool = field(default=False, repr=False)

    def finish(self, exit_status: int | None = None) -> None:
        if self.finished or not self.report_dir:
            return
        self.finished = True
        data = self.recorder.to_json()
        ProcessReport(
            pid=os.getpid(),
            main=self.main,
            exception=self.exception,
            exit_status=exit_status,
            transfers=data["transfers"],
            created_then_moved=data["created_then_moved"],
            device_errors=data["device_errors"],
        ).write(self.report_dir)

    def forked(self) -> None:
        """In a forked child: report what this process does, not what it inherited."""
        self.recorder.clear()
        self.main = False
        self.exception = None
        self.finished = False
        report_at_every_end(self.finish)


def start(backend: str, gpus: int, report_dir: str | None, main: bool) -> Session:
    """Install ``backend`` in this process and pass it on to the processes it starts."""
    _export(backend, gpus, report_dir)
    if report_dir and main:
        os.makedirs(report_dir, exist_ok=True)
    if backend == "emulated":
        from devlint.harness.emulator import install

        recorder = install(visible_gpus(gpus)).state.recorder
    elif backend == "cuda":
        from devlint.harness.cuda_observer import install as observe_cuda

        recorder = observe_cuda()
    elif backend == "none":
        recorder = Recorder()
    else:
        raise ValueError(f"unknown backend {backend!r}")
    session = Session(backend, report_dir, main, recorder)
    if report_dir:
        os.register_at_fork(after_in_child=session.forked)
    return session


def visible_gpus(gpus: int) -> int:
    """``CUDA_VISIBLE_DEVICES`` hides GPUs from the emulator as it hides them from CUDA."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return gpus
    count = 0
    for entry in visible.split(","):
        entry = entry.strip()
        if not entry or entry.startswith("-"):
            break
        count += 1
    return min(gpus, count)


def _export(backend: str, gpus: int, report_dir: str | None) -> None:
    os.environ[BACKEND_ENV] = backend
    os.environ[GPUS_ENV] = str(gpus)
    if report_dir:
        os.environ[REPORT_ENV] = report_dir
    os.environ["PYTHONPATH"] = package_path(str(BOOT))


def package_path(*first: str) -> str:
    """``PYTHONPATH`` with devlint's root (and ``first``) in front: children import this devlint."""
    root = str(Path(__file__).resolve().parents[2])
    paths = [*first, root, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return os.pathsep.join(dict.fromkeys(paths))


def execute(script: str, args: list[str], session: Session) -> int:
    """Run ``script`` as ``__main__``; the exit status ``python script`` would have."""
    path = os.path.abspath(script)
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(path)
    try:
        if is_notebook(path):
            _run_notebook(path)
        else:
            runpy.run_path(path, run_name="__main__")
    except SystemExit as exit_:
        return _exit_status(exit_.code)
    except BaseException as error:  # the script's own failure: report it like Python does
        session.exception = describe(error)
        print_traceback(error, _from_script(error.__traceback__, path))
        return 1
    return 0


def _run_notebook(path: str) -> None:
    """A notebook's code cells run one after the other in one namespace, as "Run All"
    does (in the order ``devlint.notebooks.program`` gives, IPython lines made inert): a
    cell that raises, or does not compile, stops the run there. Each cell is compiled
    under the notebook's name at its program lines, so reports name them and ``summary``
    names them by cell."""
    with open(path, "rb") as file:
        program = program_of(read_notebook(file.read()))
    lines = program.text.splitlines(True)
    linecache.cache[path] = (len(program.text), None, lines, path)
    main = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
    start = 0
    for end in range(1, len(lines) + 1):
        if end == len(lines) or program.places[end][0] != program.places[start][0]:
            cell = "\n" * start + "".join(lines[start:end])  # the cell at its program lines
            exec(compile(cell, path, "exec"), main)
            start = end


def print_traceback(error: BaseException, tb: TracebackType | None) -> None:
    """Python's traceback, without the emulator's frames: the error is the user's line's."""
    hidden = (os.path.join(str(Path(__file__).resolve().parent), ""), os.sep + "_compile.py")
    report = traceback.TracebackException(type(error), error, tb)
    for group in _chain(report):
        group.stack = traceback.StackSummary.from_list(
            [
                frame
                for frame in group.stack
                if not frame.filename.startswith(hidden[0])
                and not frame.filename.endswith(hidden[1])
            ]
        )
    print("".join(report.format()), end="", file=sys.stderr)


def _chain(report: traceback.TracebackException) -> list[traceback.TracebackException]:
    found, current = [], report
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _from_script(tb: TracebackType | None, path: str) -> TracebackType | None:
    """The traceback from the script's first frame on (the launcher's frames are noise)."""
    current = tb
    while current is not None:
        if os.path.abspath(current.tb_frame.f_code.co_filename) == path:
            return current
        current = current.tb_next
    return tb


def describe(error: BaseException) -> dict[str, Any]:
    """Type, message and the innermost line of the user's code that raised it."""
    file, line = "<unknown>", 0
    tb = error.__traceback__
    while tb is not None:
        if is_user_file(tb.tb_frame.f_code.co_filename):
            file, line = tb.tb_frame.f_code.co_filename, tb.tb_lineno
        tb = tb.tb_next
    if isinstance(error, SyntaxError) and error.filename and error.lineno:  # where it is
        file, line = error.filename, error.lineno
        return {"type": "SyntaxError", "message": error.msg, "file": file, "line": line}
    return {"type": type(error).__name__, "message": str(error), "file": file, "line": line}


def install_from_environment() -> None:
    """For a process the script started: same backend, report at exit (``sitecustomize``)."""
    backend = os.environ.get(BACKEND_ENV)
    if backend not in BACKENDS or is_resource_tracker(sys.orig_argv):
        return
    session = start(
        backend, int(os.environ.get(GPUS_ENV, "2")), os.environ.get(REPORT_ENV), main=False
    )
    previous = sys.excepthook

    def excepthook(kind: type[BaseException], error: BaseException, tb: Any) -> None:
        session.exception = describe(error)
        if previous is sys.__excepthook__:
            print_traceback(error, tb)
        else:
            previous(kind, error, tb)

    sys.excepthook = excepthook
    if session.report_dir:
        report_at_every_end(session.finish)


def is_resource_tracker(argv: list[str]) -> bool:
    """multiprocessing's resource tracker: it runs no user code and outlives the program."""
    return "-c" in argv[:-1] and argv[argv.index("-c") + 1].startswith(RESOURCE_TRACKER)


def run_child(spec: dict[str, Any]) -> None:
    """The body of one example's process, forked from a server that has torch imported."""
    os.setsid()  # its own process group: a timeout kills the script and all it started
    os.chdir(spec["cwd"])
    os.environ.clear()
    os.environ.update(spec["env"])
    for fd, path in ((1, spec["stdout"]), (2, spec["stderr"])):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    _limit_threads(spec.get("threads", 1))
    status = 1
    try:
        session = start(spec["backend"], spec["gpus"], spec["report"], main=True)
        status = execute(spec["script"], spec.get("args", []), session)
        atexit._run_exitfuncs()
        session.finish(status)
    except BaseException:  # the harness itself failed here: leave the reason in the output
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def _limit_threads(threads: int) -> None:
    """Examples share the cores: each gets its share of torch's intra-op threads."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devlint.harness.launch")
    parser.add_argument("--backend", choices=BACKENDS, default="emulated")
    parser.add_argument("--gpus", type=int, default=2)
    parser.add_argument("--report", help="folder for the per-process JSON reports")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    session = start(options.backend, options.gpus, options.report, main=True)
    status = execute(options.script, options.args, session)
    session.finish(status)
    return status


if __name__ == "__main__":
    sys.exit(main())
