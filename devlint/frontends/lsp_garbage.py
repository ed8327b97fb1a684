"""When the language server collects its cyclic garbage.

The analysis of a file is a web of objects that refer to each other (a scope and the
functions bound in it), so a report the server lets go, superseded or replaced by the
next version's, is freed only by a full collection of the cyclic garbage collector.
``devlint lsp`` runs at devlint's raised collector thresholds (``gc_thresholds``), where
such a collection comes only after tens of lints of a large file: typing into a
5,000-line file grew the server from 180 to 750 MB.

A full collection walks every live object, most of them the trees the project indexes
hold, so collecting after every lint could cost more than the lint in a large project.
The server collects once the lines linted since the last collection reach the lines of
trees held (and at least ``FLOOR_LINES``): each collection then costs a small part of
the lints whose garbage it frees, and that garbage never outgrows what is held.

A collection comes even while the lint of a newer version waits, which then starts that
much later. Putting it off until no lint waits (for four or two times the lines at most)
was tried: with a 5,000-line file typed into every 0.3 s on a loaded two-core machine
(``benchmarks/lsp_typing.py``), the last version came out 1.2 lone edits' time after
the last edit instead of 2.0, but the server's peak memory rose from 205 to 290-300 MB
(a lint allocating while the garbage of the one before is still there), and stayed.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

FLOOR_LINES = 2_000
"""Lines linted between two collections at least: a few megabytes of analysis, so that
editing small files in a small project does not collect after every lint."""


@dataclass
class GarbageCollection:
    """Counts the lines linted, and collects when enough garbage may have piled up."""

    linted_since: int = 0

    def after_lint(self, linted: int, held: int) -> bool:
        """A lint of ``linted`` lines ended, the indexes hold ``held`` lines of trees:
        collect if it is time; whether it collected."""
        self.linted_since += linted
        if self.linted_since < max(held, FLOOR_LINES):
            return False
        gc.collect()
        self.linted_since = 0
        return True
