"""Counts in what the harness prints: "1 GPU", "2 GPUs", "1 copy", "3 copies"."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and its noun, in the plural (``noun`` + "s" unless given) unless it is 1."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
