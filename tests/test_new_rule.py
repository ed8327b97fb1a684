"""scripts/new_rule.py: the files a new rule starts from, each in the shape the example,
fixture and registry tests ask for."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest
from expectations import parse_expectations

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("new_rule", ROOT / "scripts" / "new_rule.py")
assert _spec is not None and _spec.loader is not None
new_rule = importlib.util.module_from_spec(_spec)
sys.modules["new_rule"] = new_rule
_spec.loader.exec_module(new_rule)


@pytest.mark.parametrize("clash", [False, True])
def test_a_rule_starts_as_its_module_its_examples_and_two_fixtures(clash: bool) -> None:
    written = new_rule.files("DVL199", "made-up-rule", "a made-up summary", "warning", clash)
    relative = sorted(path.relative_to(ROOT).as_posix() for path in written)
    assert relative == [
        "devlint/rules/dvl199_made_up_rule.py",
        "fixtures/DVL199/reported_case.py",
        "fixtures/DVL199/silent_case.py",
        "rules/DVL199-made-up-rule/bad.py",
        "rules/DVL199-made-up-rule/fixed.py",
        "rules/DVL199-made-up-rule/good.py",
    ]
    module = ast.parse(written[ROOT / "devlint/rules/dvl199_made_up_rule.py"])
    classes = [node for node in module.body if isinstance(node, ast.ClassDef)]
    assert [node.name for node in classes] == ["MadeUpRule"]
    assert [ast.unparse(base) for base in classes[0].bases] == ["ClashRule" if clash else "Rule"]
    text = written[ROOT / "devlint/rules/dvl199_made_up_rule.py"]
    assert 'code="DVL199"' in text and "Severity.WARNING" in text
    for section in ("## What it does", "## Why is this bad?", "## Fix safety", "## References"):
        assert section in text


def test_the_examples_and_fixtures_carry_their_markers_and_verdicts() -> None:
    written = new_rule.files("DVL199", "made-up-rule", "a made-up summary", "error", False)
    by_name = {path.relative_to(ROOT).as_posix(): text for path, text in written.items()}
    bad = parse_expectations(by_name["rules/DVL199-made-up-rule/bad.py"])
    assert [marker.code for marker in bad] == ["DVL199"]
    assert parse_expectations(by_name["rules/DVL199-made-up-rule/good.py"]) == []
    reported = ast.get_docstring(ast.parse(by_name["fixtures/DVL199/reported_case.py"]))
    silent = ast.get_docstring(ast.parse(by_name["fixtures/DVL199/silent_case.py"]))
    assert reported is not None and reported.startswith("Reported")
    assert silent is not None and silent.startswith("Silent")


@pytest.mark.parametrize(
    "argv",
    [
        ["DVL101", "mixed-device-operands", "--summary", "taken"],
        ["DVL1", "too-short", "--summary", "bad code"],
        ["DVL199", "Not_Kebab", "--summary", "bad name"],
    ],
)
def test_a_taken_code_or_a_malformed_name_is_refused_before_anything_is_written(argv):
    with pytest.raises(SystemExit) as exit_:
        new_rule.main(argv)
    assert exit_.value.code == 2
    assert not (ROOT / "fixtures" / "DVL199").exists()
