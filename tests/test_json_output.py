"""``devlint check --format json`` prints what ``JSON_FIELDS`` defines, and nothing else.

The fields are defined once (``devlint.diagnostic.JSON_FIELDS``); docs/usage.md's table is
generated from them. Here the real output of a run whose problems carry every optional
field (a notebook's cell, a place in another file) is checked against that definition.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from devlint.diagnostic import JSON_FIELDS, JsonField

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
NOTEBOOK = "notebooks/batch_not_moved.ipynb"  # DVL301 in cell 6
CITING = "projects/relative_mask_helper/pkg/attention.py"  # DVL103, its mask made in masks.py

JSON_TYPES: dict[str, type] = {"string": str, "integer": int, "array": list}


def violations(value: object, fields: tuple[JsonField, ...], where: str) -> list[str]:
    """How the JSON object ``value`` departs from ``fields``: a field not defined, an
    always-present field missing, a value of another JSON type (each array item too)."""
    if not isinstance(value, dict):
        return [f"{where}: {value!r} is not an object"]
    defined = {spec.name: spec for spec in fields}
    found = [f"{where}: `{name}` is not defined" for name in value if name not in defined]
    for name, spec in defined.items():
        if name not in value:
            found += [f"{where}: `{name}` is missing"] if spec.always else []
            continue
        item = value[name]
        expected = JSON_TYPES[spec.type]
        if not isinstance(item, expected) or isinstance(item, bool):
            found.append(f"{where}: `{name}` is {item!r}, not a JSON {spec.type}")
        elif spec.items:
            for number, element in enumerate(item):
                found += violations(element, spec.items, f"{where}.{name}[{number}]")
    return found


def test_the_checker_finds_each_kind_of_departure() -> None:
    """The test below passes only if this checker can fail."""
    good = {"path": "a.py", "line": 1, "column": 1, "end_line": 1, "end_column": 2}
    good |= {"code": "DVL101", "message": "m", "severity": "error"}
    assert violations(good, JSON_FIELDS, "o") == []
    assert violations({**good, "extra": 1}, JSON_FIELDS, "o") == ["o: `extra` is not defined"]
    assert violations({**good, "cell": True}, JSON_FIELDS, "o") == [
        "o: `cell` is True, not a JSON integer"
    ]
    missing = {name: value for name, value in good.items() if name != "end_line"}
    assert violations(missing, JSON_FIELDS, "o") == ["o: `end_line` is missing"]
    assert violations({**good, "related": [{"path": "b.py"}]}, JSON_FIELDS, "o") == [
        "o.related[0]: `line` is missing"
    ]


def test_the_json_output_follows_its_definition() -> None:
    command = ["check", "--no-cache", "--format", "json", NOTEBOOK, CITING]
    result = subprocess.run(
        [sys.executable, "-m", "devlint", *command],
        cwd=FIXTURES,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    printed = json.loads(result.stdout)
    assert [(entry["path"], entry["code"]) for entry in printed] == [
        (NOTEBOOK, "DVL301"),
        (CITING, "DVL103"),
    ]
    problems = [
        problem
        for number, entry in enumerate(printed)
        for problem in violations(entry, JSON_FIELDS, f"[{number}]")
    ]
    assert problems == []
    # the run shows every field, so none goes unchecked: `cell` and `related` are there
    shown = {name for entry in printed for name in entry}
    assert shown == {spec.name for spec in JSON_FIELDS}
    for entry in printed:  # in the order defined
        assert list(entry) == [spec.name for spec in JSON_FIELDS if spec.name in entry]
