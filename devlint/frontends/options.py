"""Command-line options that more than one command takes, spelled and checked alike."""

from __future__ import annotations

import argparse
import os


def positive_int(text: str) -> int:
    """An option's value that must be a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def add_jobs_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``-j N`` / ``--jobs N``: how many ``what`` run at once (default: the CPUs)."""
    parser.add_argument(
        "-j",
        "--jobs",
        type=positive_int,
        default=os.cpu_count() or 1,
        metavar="N",
        help=f"{what} run at once (default: number of CPUs)",
    )
