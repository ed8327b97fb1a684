"""The `# expect: CODE[@COL]` / `# todo-expect: CODE` markers of examples and fixtures, and
the `# alone-expect: CODE` markers of fixture projects (reported when the file is linted
without its project)."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

_MARKER = re.compile(r"(?<![\w-])(?P<kind>todo-expect|alone-expect|expect):(?P<codes>[^#]*)")
_CODE = re.compile(r"(?P<code>[A-Z]+[0-9]+)(?:@(?P<column>[1-9][0-9]*))?")


@dataclass(frozen=True, order=True)
class Expectation:
    """One marker: `code` must be reported on `line` (at 1-based `column` when given)."""

    line: int
    code: str
    column: int | None = None
    todo: bool = False
    alone: bool = False  # reported when the file is linted without its project


def parse_expectations(source: str) -> list[Expectation]:
    """The `expect:` / `todo-expect:` markers of the comments in `source`; strings do not count."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        for marker in _MARKER.finditer(token.string):
            items = marker["codes"].replace(",", " ").split()
            if not items:
                raise ValueError(f"line {token.start[0]}: marker without a code: {token.string!r}")
            for item in items:
                match = _CODE.fullmatch(item)
                if match is None:
                    raise ValueError(f"line {token.start[0]}: malformed marker {token.string!r}")
                column = int(match["column"]) if match["column"] else None
                kind = marker["kind"]
                found.append(
                    Expectation(
                        token.start[0],
                        match["code"],
                        column,
                        todo=kind == "todo-expect",
                        alone=kind == "alone-expect",
                    )
                )
    return found
