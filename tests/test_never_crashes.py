"""Any valid Python, and any prefix of a real file, lints without an internal error.

Two ways in for every generated program: the engine with every rule enabled
(nothing may come back as DVL003), and each rule run on its own over the
analysis' facts, so that a rule that raises is named with its traceback
instead of hiding behind the engine's safety net.
"""

from pathlib import Path

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devlint import clash_owners
from devlint.config import Settings
from devlint.core.analysis import analyse
from devlint.notices import INTERNAL_ERROR
from devlint.rules import all_rules
from devlint.running.engine import lint_source

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")  # generated code, not ours
EXAMPLES = sorted((ROOT / "rules").glob("*/*.py"))
EVERY_RULE = Settings(select=("DVL",))  # rules that are off by default too


def _internal_errors(source: str) -> list[str]:
    diagnostics = lint_source(source, "fuzz.py", EVERY_RULE)
    return [d.message for d in diagnostics if d.code == INTERNAL_ERROR]


def _check_every_rule(source: str) -> None:
    """Run each rule on the facts and turn each finding into a position and a fix."""
    try:
        module = cst.parse_module(source)
    except Exception:
        return  # LibCST rejects it: the engine reports DVL001 and no rule runs
    try:
        facts = analyse(module, EVERY_RULE)
        clash_owners.assign(facts, {rule.meta.code for rule in all_rules()})
    except RecursionError:
        return  # nested too deeply: the engine reports DVL004 and no rule runs
    for rule in all_rules():
        for finding in rule().check(facts):
            facts.span_of(finding.node)
            fix = finding.fix() if finding.fix is not None else None
            if fix is not None:
                fix.suggestion(facts)


def _never_raises(source: str) -> None:
    assert _internal_errors(source) == []
    _check_every_rule(source)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_generated_programs_never_raise(source):
    # The "import torch" line defeats the pre-filter so the analysis really runs.
    _never_raises("import torch\n" + source)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_generated_statements_never_raise(source):
    _never_raises("import torch\n" + source)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(EXAMPLES), hypothesmith.from_grammar(), st.booleans())
def test_generated_code_around_real_examples_never_raises(example, generated, before):
    """A rule example (models, loaders, devices, findings) with arbitrary code next to it,
    which may rebind any of its names to anything, so every rule meets odd values."""
    text = example.read_text(encoding="utf-8")
    _never_raises(generated + "\n" + text if before else text + "\n" + generated)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_prefix_of_an_example_lints_cleanly(path):
    """Half-typed editor buffers: cut an example after every line, and mid-line."""
    text = path.read_text(encoding="utf-8")
    for cut in range(0, len(text), 37):
        assert _internal_errors(text[:cut]) == [], f"cut at {cut}"


def test_a_module_joined_with_wrappers_made_by_different_calls():
    # speechbrain core.py: DataParallel on one path, DDP on the other, then a third path
    _never_raises(
        "import torch.nn as nn\n"
        "model = nn.Linear(2, 2)\n"
        "if a:\n"
        "    model = nn.DataParallel(model)\n"
        "else:\n"
        "    model = nn.parallel.DistributedDataParallel(model)\n"
        "if b:\n"
        "    model = nn.Linear(2, 2)\n"
        "print(model)\n"
    )
