"""Every rule is discovered, has a unique code, examples and generated docs."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from devlint.codes import rule_codes
from devlint.notices import NOTICE_SUMMARIES
from devlint.rule_examples import EXAMPLE_FILES, example_dir
from devlint.rules import all_rules

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("## What it does", "## Why is this bad?", "## Fix safety", "## References")


def test_rules_are_discovered():
    assert len(all_rules()) >= 4


def test_codes_and_names_are_unique_and_well_formed():
    codes = [rule.meta.code for rule in all_rules()]
    names = [rule.meta.name for rule in all_rules()]
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)
    assert not set(codes) & set(NOTICE_SUMMARIES)
    for rule in all_rules():
        assert re.fullmatch(r"DVL[1-9]\d\d", rule.meta.code)
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.meta.name)


def test_codes_known_without_importing_the_rules_are_the_rules_codes():
    # `select` is checked against them on every run, cached or not.
    assert rule_codes() == tuple(rule.meta.code for rule in all_rules())
    assert all(
        rule.__module__.rsplit(".", 1)[1].startswith(rule.meta.code.lower() + "_")
        for rule in all_rules()
    )


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.meta.code)
def test_rule_has_examples_docstring_sections_and_runtime_expectation(rule):
    folder = example_dir(rule)
    for name in EXAMPLE_FILES:
        assert (folder / name).is_file(), f"{folder / name} is missing"
    assert "# expect: " + rule.meta.code in (folder / "bad.py").read_text(encoding="utf-8")
    for section in SECTIONS:
        assert section in (rule.__doc__ or ""), f"{rule.meta.code} lacks {section}"
    runtime = rule.meta.runtime
    assert (runtime.exception and runtime.message) or runtime.symptom


def test_every_examples_folder_belongs_to_a_rule():
    known = {example_dir(rule).name for rule in all_rules()}
    folders = {path.name for path in (ROOT / "rules").iterdir() if path.is_dir()}
    assert folders == known


def test_generated_docs_are_up_to_date():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_docs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
