"""Any valid Python, and any prefix of a real file, lints without an internal error."""

from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings

from devlint.engine import lint_source
from devlint.notices import INTERNAL_ERROR

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")  # generated code, not ours
EXAMPLES = sorted((ROOT / "rules").glob("*/*.py"))


def _internal_errors(source: str) -> list[str]:
    return [d.message for d in lint_source(source, "fuzz.py") if d.code == INTERNAL_ERROR]


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_generated_programs_never_raise(source):
    # The "import torch" line defeats the pre-filter so the analysis really runs.
    assert _internal_errors("import torch\n" + source) == []


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_generated_statements_never_raise(source):
    assert _internal_errors("import torch\n" + source) == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_prefix_of_an_example_lints_cleanly(path):
    """Half-typed editor buffers: cut an example after every line, and mid-line."""
    text = path.read_text(encoding="utf-8")
    for cut in range(0, len(text), 37):
        assert _internal_errors(text[:cut]) == [], f"cut at {cut}"
