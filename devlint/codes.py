"""The codes devlint knows, and the errors for a selection that would turn every rule off
without a word: a code devlint does not know (a typo), or no code at all."""

from __future__ import annotations

import difflib
import importlib.util
import pkgutil
import re
from collections.abc import Iterable
from functools import cache

from devlint.notices import NOTICE_SUMMARIES

_RULE_MODULE = re.compile(r"(?P<code>[a-z]+[0-9]+)_\w+")


def empty_selection(instead: str) -> str:
    """The error for a ``select`` with no codes in it (``select = []``, ``--select ""``): it
    reports nothing, which is hardly ever meant; ``instead`` says what leaving it out keeps."""
    return (
        "no codes: that selects no rule, so nothing would be reported (leave it out for"
        f" {instead}, or ignore DVL to turn every rule off)"
    )


@cache
def rule_codes() -> tuple[str, ...]:
    """Every rule's code, read from its module's name (``dvl101_….py`` is DVL101): importing
    the rules would load LibCST, which a run the cache answers never needs."""
    spec = importlib.util.find_spec("devlint.rules")
    locations = spec.submodule_search_locations if spec is not None else None
    names = (info.name for info in pkgutil.iter_modules(locations or []))
    return tuple(sorted(m["code"].upper() for m in map(_RULE_MODULE.fullmatch, names) if m))


@cache
def _prefixes() -> frozenset[str]:
    """Every code and every prefix of one: what ``select`` and ``ignore`` accept."""
    codes = (*rule_codes(), *NOTICE_SUMMARIES)
    return frozenset(code[:end] for code in codes for end in range(1, len(code) + 1))


def unknown_code(codes: Iterable[str], where: str = "") -> str | None:
    """The error for the first of ``codes`` that is no code or prefix devlint knows, with
    the nearest one it knows: ``unknown rule code 'DVL1O1' in --select (did you mean
    DVL101?)``; None when all are known."""
    known = _prefixes()
    for code in codes:
        if code not in known:
            place = f" in {where}" if where else ""
            return f"unknown rule code {code!r}{place}{_hint(code, known)}"
    return None


def _hint(code: str, known: frozenset[str]) -> str:
    """The nearest known prefix of the same length (``DLV4``: DVL4), else the nearest full
    code (``DVL1011``: DVL101); of equally near ones, the one that starts like ``code``
    (``DVL123``: DVL103 rather than DVL203). Never a shorter prefix: ``DVL`` for ``DVL999``
    would drop what was typed and name no rule."""
    typed = code.upper()
    same_length = sorted(p for p in known if len(p) == len(typed))
    full_codes = sorted({*rule_codes(), *NOTICE_SUMMARIES})
    for candidates in (same_length, full_codes):
        nearest = difflib.get_close_matches(typed, candidates, n=5)
        if nearest:
            best = max(nearest, key=lambda match: _shared_start(match, typed))
            return f" (did you mean {best}?)"
    return " (codes look like DVL101, prefixes like DVL1; `devlint rules` lists them)"


def _shared_start(one: str, other: str) -> int:
    """How many leading characters the two have in common."""
    pairs = zip(one, other, strict=False)
    return next((index for index, (a, b) in enumerate(pairs) if a != b), min(len(one), len(other)))
