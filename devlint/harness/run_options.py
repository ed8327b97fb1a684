"""The options of ``devlint run`` itself: declared by ``commands`` and read back by ``cli``
to tell devlint's options from the script's."""

from __future__ import annotations

import argparse
from pathlib import Path


def run_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--gpus`` and ``--json`` to ``parser``."""
    parser.add_argument(
        "--gpus", type=int, default=2, metavar="N", help="emulated GPUs (default 2)"
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the report here")
