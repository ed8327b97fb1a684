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
the lints whose garbage it frees, and that garbage never outgrows what is held. While
another lint waits (the user is typing), the collection waits too, up to ``PATIENCE``
times as many lines: the lint the user waits for goes first.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

FLOOR_LINES = 2_000
"""Lines linted between two collections at least: a few megabytes of analysis, so that
editing small files in a small project does not collect after every lint."""
PATIENCE = 4
"""How many times the usual lines a collection waits for while other lints wait."""


@dataclass
class GarbageCollection:
    """Counts the lines linted, and collects when enough garbage may have piled up."""

    linted_since: int = 0

    def after_lint(self, linted: int, held: int, busy: bool) -> bool:
        """A lint of ``linted`` lines ended, the indexes hold ``held`` lines of trees and
        other lints wait if ``busy``: collect if it is time; whether it collected."""
        self.linted_since += linted
        due = max(held, FLOOR_LINES)
        if self.linted_since < (PATIENCE * due if busy else due):
            return False
        gc.collect()
        self.linted_since = 0
        return True
