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
        """The JSON object of ``devlint check --format json``: the fields of
        ``JSON_FIELDS``, in its order, each optional one only when it has a value."""
        values: dict[str, object] = {
            "path": self.path,
            "cell": self.cell,
            "line": self.line,
            "column": self.column + 1,
            "end_line": self.end_line,
            "end_column": self.end_column + 1,
            "code": self.code,
            "message": self.message,
            "severity": self.severity.value,
            "related": [vars(place) for place in self.related] or None,
        }
        return _following(JSON_FIELDS, values)


@dataclass(frozen=True)
class JsonField:
    """One field of the JSON output: its name, its JSON type, whether every object has it,
    and what it means; ``items``: the fields of each object of an array."""

    name: str
    type: str  # a JSON type: "string", "integer", "array"
    always: bool
    meaning: str
    items: tuple[JsonField, ...] = ()


JSON_FIELDS = (
    JsonField(
        "path",
        "string",
        True,
        "the file, as named on the command line or found under it (`-`: `<stdin>`, or "
        "`--stdin-filename`)",
    ),
    JsonField(
        "cell",
        "integer",
        False,
        "in a notebook, the cell's number (every cell counted from 1, markdown too)",
    ),
    JsonField(
        "line",
        "integer",
        True,
        "the line where the problem starts, from 1 (in a notebook, from the cell's first)",
    ),
    JsonField("column", "integer", True, "the column where it starts, from 1, in code points"),
    JsonField("end_line", "integer", True, "the line where it ends"),
    JsonField("end_column", "integer", True, "the column just past its end (exclusive)"),
    JsonField("code", "string", True, "the rule's code (`DVL101`)"),
    JsonField("message", "string", True, "what is wrong, and what to do"),
    JsonField("severity", "string", True, "`error`, `warning` or `info`"),
    JsonField(
        "related",
        "array",
        False,
        "the places in other files the message names (where a value it names came from)",
        items=(
            JsonField("path", "string", True, "the other file"),
            JsonField("line", "integer", True, "the line of it the message names"),
        ),
    ),
)
"""The fields of each object ``devlint check --format json`` prints, in the order printed:
``to_json``, the table in docs/usage.md and the schema test all follow this one list."""


def _following(fields: tuple[JsonField, ...], values: dict[str, object]) -> dict[str, object]:
    """``values`` in the order of ``fields``, those without a value (None) left out, and the
    objects of an array each in the order of its ``items``."""
    shaped: dict[str, object] = {}
    for spec in fields:
        value = values[spec.name]
        if isinstance(value, list) and spec.items:
            value = [_following(spec.items, item) for item in value]
        if value is not None:
            shaped[spec.name] = value
    return shaped
