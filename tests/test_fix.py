"""Fixes are checked like ruff checks them: on every rule's `bad.py` (and every fixture) applying
all fixes converges, the result parses and re-lints clean for the rule, and it equals the rule's
`fixed.py` — apart from the module docstring and the `# expect:` markers, which describe the bug.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import libcst as cst
import pytest

from devlint.config import Settings
from devlint.diagnostic import SourceEdit, SuggestedFix
from devlint.rulekit.fixes import with_keyword
from devlint.rules import all_rules
from devlint.running.engine import lint_source
from devlint.running.fix import ROUND_TRIP, apply_fixes, fix_source

ROOT = Path(__file__).resolve().parent.parent
RULE_FOLDERS = sorted(path for path in (ROOT / "rules").iterdir() if (path / "bad.py").is_file())
FIXTURES = sorted((ROOT / "fixtures").glob("*/*.py"))
FIXABLE = {rule.meta.code for rule in all_rules() if rule.meta.fixable}
MARKER = re.compile(r"[ \t]*# (?:todo-)?expect:[^\n]*$", re.MULTILINE)

# Where a fix cannot write what a person wrote in fixed.py: (text in fixed.py, the fix's text).
NOT_REPRODUCED = {
    # fixed.py uses `torch.randn_like(std)`; the fix adds `device=` and leaves the call as it is.
    "DVL103": [("torch.randn_like(std)", "torch.randn(std.size(), device=std.device)")],
    # fixed.py keeps a reference to the unwrapped classifier; the fix reaches through the wrapper.
    "DVL401": [
        (
            "classifier = BagOfWordsClassifier(vocab_size=100, dim=16, num_classes=4).to(device)\n"
            "model = classifier\n",
            "model = BagOfWordsClassifier(vocab_size=100, dim=16, num_classes=4).to(device)\n",
        ),
        ("nn.DataParallel(classifier)", "nn.DataParallel(model)"),
        ("classifier.num_classes", 'getattr(model, "module", model).num_classes'),
        ("classifier.predict", 'getattr(model, "module", model).predict'),
    ],
}


def _code(folder: Path) -> str:
    return folder.name.split("-", 1)[0]


def _settings(code: str) -> Settings:
    return Settings(extend_select=(code,))


def _without_docstring_and_markers(source: str) -> str:
    docstring = ast.parse(source).body[0]
    lines = source.splitlines(keepends=True)[docstring.end_lineno :]
    while lines and not lines[0].strip():
        lines.pop(0)
    return MARKER.sub("", "".join(lines))


def _fixed_everything(source: str, path: str, code: str):
    result = fix_source(source, path, _settings(code), unsafe=True)
    assert result.problem is None, result.problem
    return result


@pytest.mark.parametrize("folder", RULE_FOLDERS, ids=lambda folder: folder.name)
def test_fixing_bad_example_converges_and_reparses(folder: Path) -> None:
    code = _code(folder)
    source = (folder / "bad.py").read_text(encoding="utf-8")
    result = _fixed_everything(source, f"{folder.name}/bad.py", code)
    assert cst.parse_module(result.fixed).code == result.fixed
    again = fix_source(result.fixed, "again.py", _settings(code), unsafe=True)
    assert not again.changed, "a second --fix changed the file again"
    assert (code in FIXABLE) == result.changed, f"{code}: RuleMeta.fixable disagrees with its fix"


@pytest.mark.parametrize(
    "folder", [f for f in RULE_FOLDERS if _code(f) in FIXABLE], ids=lambda folder: folder.name
)
def test_fixed_bad_example_lints_clean_and_equals_fixed_example(folder: Path) -> None:
    code = _code(folder)
    source = (folder / "bad.py").read_text(encoding="utf-8")
    result = _fixed_everything(source, f"{folder.name}/bad.py", code)
    left = lint_source(result.fixed, "fixed.py", _settings(code))
    assert [d for d in left if d.code == code] == []
    assert {d.code for d in left} <= {
        d.code for d in lint_source(source, "bad.py", _settings(code))
    }
    expected = _without_docstring_and_markers((folder / "fixed.py").read_text(encoding="utf-8"))
    for written, produced in NOT_REPRODUCED.get(code, []):
        assert written in expected, f"{code}: NOT_REPRODUCED is stale: {written!r}"
        expected = expected.replace(written, produced)
    assert _without_docstring_and_markers(result.fixed) == expected


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_fixing_fixture_converges_and_removes_what_it_fixes(path: Path) -> None:
    code = path.parent.name
    source = path.read_text(encoding="utf-8")
    before = lint_source(source, path.name, _settings(code))
    result = _fixed_everything(source, path.name, code)
    assert cst.parse_module(result.fixed).code == result.fixed
    assert not fix_source(result.fixed, path.name, _settings(code), unsafe=True).changed
    assert {d.code for d in result.diagnostics} <= {d.code for d in before}
    assert all(d.fix is None for d in result.diagnostics), "a fix was left unapplied"


def test_safe_fixes_only_without_unsafe_fixes() -> None:
    folder = next(f for f in RULE_FOLDERS if _code(f) == "DVL204")
    source = (folder / "bad.py").read_text(encoding="utf-8")
    safe = fix_source(source, "bad.py", _settings("DVL204"))
    assert not safe.changed  # both factories are random: the fixes are unsafe
    assert safe.unsafe_left == 2
    assert fix_source(source, "bad.py", _settings("DVL204"), unsafe=True).applied == 2


def test_deterministic_factory_fix_is_safe() -> None:
    source = (
        "import torch\n"
        'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "mask = torch.zeros(\n    4,\n    8,\n).to(device)\n"
    )
    result = fix_source(source, "x.py", _settings("DVL204"))
    assert result.fixed.endswith("mask = torch.zeros(\n    4,\n    8,\n    device=device,\n)\n")


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("DVL204", "x = torch.LongTensor([0]).to(device)"),
        ("DVL204", "x = LT(3).cuda()"),  # a size, under another name
        ("DVL204", "x = torch.Tensor(2, 3).to(device)"),
        ("DVL103", "def f(y):\n    return y + torch.FloatTensor([0.5])"),
    ],
)
def test_legacy_constructors_get_no_device_fix(code: str, line: str) -> None:
    """``torch.LongTensor(..., device=<not cpu>)`` raises: the finding stays, with no fix."""
    source = (
        "import torch\nfrom torch import LongTensor as LT\n"
        'device = torch.device("cuda")\n'
        f"{line}\n"
        'f(torch.ones(1, device="cuda"))\n'
    )
    result = fix_source(source, "x.py", _settings(code), unsafe=True)
    assert [d.code for d in result.diagnostics if d.code == code] == [code]
    assert not result.changed


@pytest.mark.parametrize(
    ("load", "safe"),
    [
        ("model.load_state_dict(torch.load(path))", True),
        ('model.load_state_dict(torch.load(path)["model"])', True),
        ('state = torch.load(path)["model"]', False),
    ],
)
def test_map_location_fix_is_safe_only_into_load_state_dict(load: str, safe: bool) -> None:
    source = (
        "import torch\nfrom torch import nn\n\n\n"
        "def restore(path):\n"
        '    device = "cuda" if torch.cuda.is_available() else "cpu"\n'
        "    model = nn.Linear(2, 2).to(device)\n"
        f"    {load}\n\n\n"
        "def save(model, path):\n"
        "    torch.save(model.state_dict(), path)\n"
    )
    (diagnostic,) = lint_source(source, "x.py")
    assert diagnostic.fix is not None
    assert diagnostic.fix.safe is safe
    assert diagnostic.fix.edits[0].text.endswith("torch.load(path, map_location=device)")


def test_map_location_is_cpu_without_a_device_variable_in_scope() -> None:
    source = (
        "import torch\n\n"
        "def train():\n"
        '    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "    return device\n\n"
        "def save(model, path):\n"
        "    torch.save({'state_dict': model.state_dict()}, path)\n\n"
        "def serve(path):\n"
        '    return torch.load(path)["state_dict"]\n'
    )
    result = fix_source(source, "x.py", unsafe=True)
    assert 'torch.load(path, map_location="cpu")' in result.fixed


def test_discarded_transfer_of_a_loop_variable_has_no_fix() -> None:
    source = (
        'import torch\na, b = torch.ones(2), torch.zeros(2)\nfor t in [a, b]:\n    t.to("cuda")\n'
    )
    (diagnostic,) = lint_source(source, "x.py")
    assert diagnostic.code == "DVL201"
    assert diagnostic.fix is None


def test_batch_is_moved_only_with_a_device_variable_bound_where_it_is_used() -> None:
    source = (
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\n\n\n"
        "def build():\n"
        '    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "    return nn.Linear(4, 2).to(device)\n\n\n"
        "def train(loader: DataLoader):\n"
        "    model = build()\n"
        "    for x, y in loader:\n"
        "        model(x)\n"
    )
    assert all(d.fix is None for d in lint_source(source, "x.py"))


def test_round_trip_failure_is_never_rewritten() -> None:
    source = 'import torch\nx = torch.ones(2)\nx.to("cuda")\n\n    # trailing'
    assert cst.parse_module(source).code != source  # the LibCST bug this guards against
    result = fix_source(source, "x.py")
    assert result.problem == ROUND_TRIP
    assert not result.changed
    assert [d.code for d in result.diagnostics] == ["DVL201"]


def test_noqa_findings_are_not_fixed() -> None:
    source = 'import torch\nx = torch.ones(2)\nx.to("cuda")  # noqa: DVL201\n'
    assert not fix_source(source, "x.py").changed


def test_overlapping_fixes_wait_for_the_next_pass() -> None:
    outer = SuggestedFix("outer", True, (SourceEdit(1, 0, 1, 5, "OUTER"),))
    inner = SuggestedFix("inner", True, (SourceEdit(1, 2, 1, 3, "i"),))
    later = SuggestedFix("later", True, (SourceEdit(2, 0, 2, 1, "Z"),))
    for fixes in ([outer, inner, later], [inner, later, later, outer]):
        assert apply_fixes("abcde\nz\n", fixes) == ("OUTER\nZ\n", [outer, later])


def test_edits_count_code_points_and_crlf_lines() -> None:
    text = 'x = "é😀"\r\ny = 1\r\n'
    fix = SuggestedFix("t", True, (SourceEdit(1, 4, 1, 8, "s"), SourceEdit(2, 4, 2, 5, "2")))
    assert apply_fixes(text, [fix]) == ("x = s\r\ny = 2\r\n", [fix])


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("f()", 'f(k="v")'),
        ("f(a)", 'f(a, k="v")'),
        ("f(a,b)", 'f(a,b,k="v")'),
        ("f(a,)", 'f(a, k="v",)'),
        ("f(\n    a,\n)", 'f(\n    a,\n    k="v",\n)'),
        ("f(\n    a\n)", 'f(\n    a,\n    k="v"\n)'),
        ("f(\n    a,\n    b,\n)", 'f(\n    a,\n    b,\n    k="v",\n)'),
    ],
)
def test_with_keyword_follows_the_call_layout(call: str, expected: str) -> None:
    node = cst.parse_expression(call)
    assert isinstance(node, cst.Call)
    result = with_keyword(node, "k", '"v"')
    assert result is not None
    assert cst.Module([]).code_for_node(result) == expected


def test_with_keyword_refuses_star_arguments() -> None:
    node = cst.parse_expression("f(a, **options)")
    assert isinstance(node, cst.Call)
    assert with_keyword(node, "k", '"v"') is None


def test_cpu_is_inserted_after_parentheses_and_around_operators() -> None:
    source = (
        "import numpy as np\nimport torch\n\n"
        'a = torch.ones(3, device="cuda")\n'
        "x = (a + a).numpy()\n"
        "y = np.array(a * a)\n"
        "z = ( a ).detach().numpy()\n"
    )
    fixed = fix_source(source, "x.py").fixed
    assert fixed.endswith(
        "x = (a + a).cpu().numpy()\ny = np.array((a * a).cpu())\nz = ( a ).detach().cpu().numpy()\n"
    )


@pytest.mark.parametrize(
    ("function", "safe"),
    [
        ("    def forward(self, x, w):\n", False),  # a module's input may be any object
        ("    def forward(self, x, w: torch.Tensor):\n", True),
        ("    def forward(self, x, w: Tensor):\n", True),
        ("    def forward(self, x, w):\n        print(w.device)\n", True),
        ("def f(w, n):\n    print(w.device)\n", True),  # read as a tensor already
    ],
    ids=["input", "tensor-input", "bare-tensor-input", "input-reads-device", "reads-device"],
)  # fmt: skip
def test_device_fix_is_safe_only_where_the_partner_is_known_to_be_a_tensor(
    function: str, safe: bool
) -> None:
    """A safe fix once wrote ``device=width_mult.device`` for a float, and broke every model
    built through that function: torch operations take Python numbers too."""
    found = lint_source(_pow_of(function), "x.py", _settings("DVL103"))
    [fix] = [d.fix for d in found if d.code == "DVL103"]
    assert fix is not None and fix.title == "Create it on `w.device`"
    assert fix.safe is safe


@pytest.mark.parametrize(
    "function",
    [
        "    def forward(self, x, w: float):\n",
        "def f(w: float, n):\n    print(w.device)\n",  # the code is wrong, not the device
        "    def forward(self, x, w=10000):\n",
    ],
    ids=["float-input", "float-reads-device", "int-default"],
)
def test_a_parameter_annotated_or_defaulted_as_a_number_is_no_tensor(function: str) -> None:
    """``torch.pow(w, e)`` takes a Python number: a ``w: float`` is on no device."""
    found = lint_source(_pow_of(function), "x.py", _settings("DVL103"))
    assert [d.code for d in found] == []


def _pow_of(function: str) -> str:
    method = function.startswith(" ")
    indent = "        " if method else "    "
    return (
        "import torch\nfrom torch import Tensor, nn\n\n\n"
        + ("class M(nn.Module):\n" if method else "")
        + function
        + f"{indent}e = torch.arange(4)\n{indent}return torch.pow(w, e)\n"
    )
