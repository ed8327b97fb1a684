"""Rule discovery: every ``Rule`` subclass in this package is a rule."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from devlint.rule import Rule


@cache
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class, sorted by code."""
    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value is not Rule
                and value.__module__ == module.__name__
            ):
                found.append(value)
    return tuple(sorted(found, key=lambda rule: rule.meta.code))


def rule_by_code(code: str) -> type[Rule] | None:
    """The rule with this code, or None."""
    return next((rule for rule in all_rules() if rule.meta.code == code), None)
