"""What every front end prints: one finding at one place in one file."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(enum.Enum):
    """How sure and how serious a finding is (maps to SARIF/LSP levels)."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class SourceEdit:
    """Replace the text from (line, column) to (end_line, end_column) by ``text``.

    Lines are 1-based, columns 0-based code points, as in ``Diagnostic``.
    """

    line: int
    column: int
    end_line: int
    end_column: int
    text: str


@dataclass(frozen=True)
class SuggestedFix:
    """A rule's fix for one finding: edits applied together, and whether ``--fix``
    may apply them without ``--unsafe-fixes``."""

    title: str
    safe: bool
    edits: tuple[SourceEdit, ...]


@dataclass(frozen=True)
class RelatedPlace:
    """Another file's line a finding rests on (where a value it names came from)."""

    path: str
    line: int


@dataclass(frozen=True, order=True)
class Diagnostic:
    """A finding. Lines are 1-based, columns 0-based code points (flake8's convention).

    Front ends convert: the CLI and JSON print 1-based columns, flake8 adds 1
    itself, LSP converts to UTF-16. In a notebook, ``cell`` is the cell's number
    (every cell counted from 1, markdown too) and lines count from the cell's first.
    """

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    message: str
    severity: Severity = Severity.ERROR
    fix: SuggestedFix | None = field(default=None, compare=False)
    related: tuple[RelatedPlace, ...] = field(default=(), compare=False)
    cell: int | None = None

    @property
    def place(self) -> tuple[str, int, int, int]:
        """Where it is, in reading order: file, cell (0 outside notebooks), line, column."""
        return (self.path, self.cell or 0, self.line, self.column)

    def to_json(self) -> dict[str, object]:
        """The JSON object of ``devlint check --format json`` (1-based columns)."""
        return {
            "path": self.path,
            **({"cell": self.cell} if self.cell is not None else {}),
            "line": self.line,
            "column": self.column + 1,
            "end_line": self.end_line,
            "end_column": self.end_column + 1,
            "code": self.code,
            "message": self.message,
            "severity": self.severity.value,
            **({"related": [vars(place) for place in self.related]} if self.related else {}),
        }
