"""Where each rule's example programs live: ``rules/<CODE>-<name>/{bad,good,fixed}.py``.

``rules/`` is data, not a package. A checkout's copy wins; an installed wheel
carries it as ``devlint/_rules``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the harness asks for rules_root() in every run: no LibCST there
    from devlint.rule import Rule

EXAMPLE_FILES = ("bad.py", "good.py", "fixed.py")


def rules_root() -> Path:
    """The folder holding every rule's examples."""
    package = Path(__file__).resolve().parent
    checkout = package.parent / "rules"
    return checkout if checkout.is_dir() else package / "_rules"


def example_dir(rule: type[Rule]) -> Path:
    return rules_root() / f"{rule.meta.code}-{rule.meta.name}"
