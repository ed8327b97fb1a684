"""Which codes a run reports: select/ignore prefixes, the longer match wins (as flake8)."""

from __future__ import annotations

import fnmatch
import functools
import os
import re

from devlint.config import Settings
from devlint.notices import NOTICE_SUMMARIES


def _longest_match(code: str, prefixes: tuple[str, ...]) -> int:
    return max((len(p) for p in prefixes if code.startswith(p)), default=-1)


def is_enabled(code: str, default_enabled: bool, settings: Settings, path: str = "") -> bool:
    """Whether ``code`` is reported for ``path`` under ``settings``."""
    ignored = settings.ignore + settings.extend_ignore + _per_file_ignores(settings, path)
    if code in NOTICE_SUMMARIES:
        selected = len(code)
    else:
        selected = _longest_match(code, settings.extend_select)
        if settings.select is None:
            if default_enabled:
                selected = max(selected, 0)
        else:
            selected = max(selected, _longest_match(code, settings.select))
    if selected < 0:
        return False
    return _longest_match(code, ignored) < selected


def _per_file_ignores(settings: Settings, path: str) -> tuple[str, ...]:
    if not settings.per_file_ignores:
        return ()
    candidates = {path.replace("\\", "/")}
    if settings.root is not None:  # globs are relative to the pyproject.toml's directory
        relative = os.path.relpath(os.path.abspath(path), settings.root)
        if not relative.startswith(".."):
            candidates.add(relative.replace("\\", "/"))
    codes: list[str] = []
    for pattern, pattern_codes in _compiled(settings.per_file_ignores):
        if any(pattern.match(candidate) for candidate in candidates):
            codes.extend(pattern_codes)
    return tuple(codes)


@functools.lru_cache(maxsize=8)
def _compiled(
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...],
) -> list[tuple[re.Pattern[str], tuple[str, ...]]]:
    """Each glob as one regex, compiled once per configuration (not per file and rule):
    it matches the path itself or any path that ends in it."""
    compiled = []
    for glob, codes in per_file_ignores:
        anywhere = "*/" + glob.lstrip("./")
        regex = f"{fnmatch.translate(glob)}|{fnmatch.translate(anywhere)}"
        compiled.append((re.compile(regex), codes))
    return compiled
