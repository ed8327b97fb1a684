"""``# noqa`` comments: what the engine honours, and what ``--add-noqa`` writes.

``# noqa`` silences every finding on its line; ``# noqa: DVL101, E501`` (codes or
prefixes, any case, separated by commas or spaces) silences those only.
"""

from __future__ import annotations

import re

NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]*(?:[\s,]+[A-Z]+[0-9]*)*))?", re.I)


def silences(match: re.Match[str], code: str) -> bool:
    """Whether the ``NOQA`` comment ``match`` silences ``code``."""
    codes = match.group("codes")
    return not codes or any(code.startswith(c.upper()) for c in re.split(r"[\s,]+", codes))
