"""A one-line progress bar on a terminal; silence otherwise (CI logs get the table)."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any, TextIO

WIDTH = 30


class Progress:
    def __init__(self, total: int, label: str, stream: TextIO | None = None) -> None:
        self.total, self.label, self.done = total, label, 0
        self.stream = stream or sys.stderr
        self.shown = self.stream.isatty()

    def advance(self, item: Any = None) -> None:
        self.done += 1
        if not self.shown:
            return
        filled = WIDTH * self.done // max(1, self.total)
        bar = "#" * filled + "-" * (WIDTH - filled)
        last = f" {item.rule} {item.example}" if item is not None else ""
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total}{last}\033[K")
        self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
