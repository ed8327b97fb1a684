"""``devlint check --format sarif``: valid SARIF 2.1.0 as GitHub code scanning reads it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from devlint.rules import all_rules

SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"
"""The official OASIS SARIF 2.1.0 schema (errata 01), kept here: tests read nothing outside."""
MIXED = """\
import torch


def run():
    a = torch.zeros(3, device="cuda")
    label = "é😀"; b = torch.ones(3)
    return a + b
"""
DISCARDED = """\
import torch

x = torch.ones(3)
x.to("cuda")
"""


def sarif(*args: str, cwd: Path) -> tuple[int, dict[str, Any]]:
    result = subprocess.run(
        [sys.executable, "-m", "devlint", "check", "--format", "sarif", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


def validate(log: dict[str, Any]) -> None:
    assert SCHEMA.is_file(), f"the official SARIF schema is expected at {SCHEMA}"
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(log), key=str)
    assert not errors, "\n".join(error.message for error in errors[:5])


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A git repository whose code lives in src/, with a space in one file name."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "mixed.py").write_text(MIXED, encoding="utf-8")
    (tmp_path / "src" / "moved data.py").write_text(DISCARDED, encoding="utf-8")
    return tmp_path


def test_log_is_valid_against_the_official_schema(repository: Path) -> None:
    status, log = sarif("src", cwd=repository)
    assert status == 1
    validate(log)
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["tool"]["driver"]["name"] == "devlint"
    assert len(run["results"]) == 2


def test_every_rule_is_described_with_help_and_a_link(repository: Path) -> None:
    _, log = sarif("src", cwd=repository)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    described = {rule["id"]: rule for rule in rules}
    for rule in all_rules():
        descriptor = described[rule.meta.code]
        assert descriptor["name"] == rule.meta.name
        summary = rule.meta.summary
        assert descriptor["shortDescription"]["text"] == f"{summary[0].upper()}{summary[1:]}."
        assert descriptor["fullDescription"]["text"]
        assert "## What it does" in descriptor["help"]["text"]
        assert descriptor["helpUri"].endswith(f"/docs/rules/{rule.meta.code}.md")
    for notice in ("DVL001", "DVL002", "DVL003"):
        assert notice in described
    for result in log["runs"][0]["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]


def test_locations_are_repository_relative_with_one_based_code_point_regions(
    repository: Path,
) -> None:
    _, log = sarif(".", cwd=repository / "src")  # run from a subdirectory
    run = log["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repository.resolve().as_uri() + "/"
    by_rule = {result["ruleId"]: result for result in run["results"]}

    mixed = by_rule["DVL101"]
    assert mixed["level"] == "error"
    location = mixed["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "src/mixed.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 7, "startColumn": 12, "endLine": 7, "endColumn": 17}

    discarded = by_rule["DVL201"]
    assert discarded["level"] == "warning"
    location = discarded["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "src/moved%20data.py"
    assert location["region"]["startLine"] == 4
    assert location["region"]["startColumn"] == 1


def test_columns_count_code_points_on_a_line_with_an_emoji(repository: Path) -> None:
    line = '    s = "é😀"; c = a + b'
    source = MIXED.replace('    label = "é😀"; b = torch.ones(3)\n    return a + b\n', "")
    source += f"    b = torch.ones(3)\n{line}\n    return c\n"
    (repository / "src" / "mixed.py").write_text(source, encoding="utf-8")
    _, log = sarif("src/mixed.py", cwd=repository)
    (result,) = log["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    start = line.index("a + b")  # 17 code points; 18 UTF-16 units
    assert (region["startLine"], region["startColumn"], region["endColumn"]) == (
        7,
        start + 1,
        start + len("a + b") + 1,
    )


def test_fingerprints_survive_lines_moving(repository: Path) -> None:
    def fingerprints() -> list[str]:
        _, log = sarif("src", cwd=repository)
        return sorted(
            result["partialFingerprints"]["primaryLocationLineHash"]
            for result in log["runs"][0]["results"]
        )

    before = fingerprints()
    path = repository / "src" / "mixed.py"
    path.write_text("# a new first line\n\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    assert fingerprints() == before
    assert len(set(before)) == 2


def test_notices_and_clean_runs_are_valid_too(repository: Path) -> None:
    (repository / "src" / "broken.py").write_text("import torch\ndef (:\n")
    _, log = sarif("src", cwd=repository)
    validate(log)
    assert "DVL001" in {result["ruleId"] for result in log["runs"][0]["results"]}

    clean = repository / "clean"
    clean.mkdir()
    (clean / "ok.py").write_text('import torch\nx = torch.ones(2, device="cuda") + 1\n')
    status, log = sarif("clean", cwd=repository)
    assert status == 0
    validate(log)
    assert log["runs"][0]["results"] == []


def test_documented_workflow_uploads_the_sarif_log() -> None:
    import re

    import yaml

    page = (Path(__file__).resolve().parents[1] / "docs" / "ci.md").read_text(encoding="utf-8")
    workflow = yaml.safe_load(re.search(r"```yaml\n(name: devlint.*?)```", page, re.S).group(1))
    assert workflow["permissions"]["security-events"] == "write"
    steps = workflow["jobs"]["devlint"]["steps"]
    run = next(step["run"] for step in steps if "--format sarif" in step.get("run", ""))
    assert run.startswith("devlint check --format sarif")
    upload = next(step for step in steps if "upload-sarif" in step.get("uses", ""))
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == run.rsplit("> ", 1)[1]


def test_a_value_from_another_file_is_a_related_location(repository: Path) -> None:
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "projects"
    shutil.copytree(fixture / "relative_mask_helper", repository / "src", dirs_exist_ok=True)
    _, log = sarif("--no-cache", "src/pkg/attention.py", cwd=repository)
    validate(log)
    (result,) = log["runs"][0]["results"]
    assert "created without `device=` at src/pkg/masks.py:7" in result["message"]["text"]
    (related,) = result["relatedLocations"]
    location = related["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "src/pkg/masks.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 7}


def test_a_file_name_that_is_not_utf8_is_percent_encoded(repository: Path) -> None:
    """``caf\\xe9.py`` (Latin-1 bytes in the name) once ended the run with UnicodeEncodeError."""
    name = os.fsdecode(b"caf\xe9.py")
    (repository / "src" / name).write_text(DISCARDED, encoding="utf-8")
    status, log = sarif(".", cwd=repository)
    assert status == 1
    validate(log)
    uris = {
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for result in log["runs"][0]["results"]
    }
    assert "src/caf%E9.py" in uris
