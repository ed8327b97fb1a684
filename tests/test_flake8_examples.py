"""Through a real flake8 subprocess, every example and fixture reports exactly its markers."""

import subprocess
import sys
from pathlib import Path

from expectations import parse_expectations

from devlint.rules import all_rules

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*ROOT.glob("rules/*/*.py"), *ROOT.glob("fixtures/*/*.py")])


def test_flake8_reports_every_marker_at_its_line_and_column():
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "flake8",
            "--isolated",
            "--select",
            "DVL",
            "-j",
            "2",
            "--format",
            "%(path)s|%(row)d|%(col)d|%(code)s",
            *map(str, FILES),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert completed.stderr == ""
    off_by_default = {rule.meta.code for rule in all_rules() if not rule.meta.default_enabled}
    reported: dict[tuple[str, int, str], int] = {}
    for line in completed.stdout.splitlines():
        path, row, col, code = line.split("|")
        own_code = Path(path).parent.name.split("-", 1)[0]
        if code in off_by_default and code != own_code:
            continue  # --select DVL turns on opt-in rules; other files are judged by defaults
        reported[(str(Path(path).resolve()), int(row), code)] = int(col)
    expected = {}
    for path in FILES:
        for marker in parse_expectations(path.read_text(encoding="utf-8")):
            if not marker.todo:
                expected[(str(path.resolve()), marker.line, marker.code)] = marker.column
    assert set(reported) == set(expected)
    for key, column in expected.items():
        if column is not None:
            assert reported[key] == column, key
    columns = sum(column is not None for column in expected.values())
    assert columns >= 4, "the rule examples pin columns; keep them"
