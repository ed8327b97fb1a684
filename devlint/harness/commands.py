"""The options of ``devlint confirm`` and ``devlint run``.

Kept apart from ``devlint.harness.cli``, which imports the harness, so that
``devlint check`` does not pay for importing it at start-up.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from devlint.frontends.options import add_jobs_option
from devlint.harness.run_options import run_options


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``confirm`` and ``run`` to the ``devlint`` command's subparsers."""
    confirm_parser = commands.add_parser(
        "confirm", help="run each rule's examples on real or emulated GPUs and check the rule"
    )
    confirm_parser.set_defaults(command=_confirm)
    confirm_parser.add_argument(
        "codes", nargs="*", metavar="CODE", help="rules to confirm (codes or prefixes; default all)"
    )
    confirm_parser.add_argument(
        "--backend",
        choices=("auto", "cuda", "emulated", "both"),
        default="auto",
        help="auto: real CUDA when a GPU is present, else emulated; both: the fidelity check",
    )
    confirm_parser.add_argument(
        "--gpus", type=int, default=2, metavar="N", help="emulated GPUs (default 2)"
    )
    confirm_parser.add_argument(
        "--json", type=Path, metavar="PATH", help="write (merge) the evidence into this file"
    )
    add_jobs_option(confirm_parser, "examples")
    confirm_parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="kill an example after this long (default 300)",
    )

    run_parser = commands.add_parser(
        "run",
        help="run a script on emulated GPUs; report device errors and transfers",
        usage="devlint run [-h] [--gpus N] [--json PATH] SCRIPT [--] [ARGS ...]",
        description="Run SCRIPT on emulated GPUs, as `python SCRIPT ARGS` would, and report "
        "device errors and transfers. devlint's options go before SCRIPT; everything after "
        "SCRIPT is the script's (a -- right after SCRIPT is dropped).",
    )
    run_parser.set_defaults(command=_run)
    run_options(run_parser)
    run_parser.add_argument(
        "command_line",
        nargs=argparse.REMAINDER,
        metavar="SCRIPT [--] [ARGS ...]",
        help="the Python script to run and its arguments",
    )


def _confirm(args: argparse.Namespace) -> int:
    from devlint.harness.cli import confirm_command

    return confirm_command(args)


def _run(args: argparse.Namespace) -> int:
    from devlint.harness.cli import run_command

    return run_command(args)
