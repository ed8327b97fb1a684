"""Which rule reports a clash: each clash rule's claims are in the one precedence list,
and where two claims accept the same clash, the earlier one reports it alone."""

from __future__ import annotations

import inspect

from devlint.clash_owners import CLASH_PRECEDENCE, code_of
from devlint.config import Settings
from devlint.rule import ClashRule
from devlint.rules import all_rules
from devlint.running.engine import lint_source


def _claims_defined_by_rules() -> set[object]:
    found = set()
    for rule in all_rules():
        module = inspect.getmodule(rule)
        for name, value in vars(module).items():
            if name.startswith("claims") and inspect.isfunction(value):
                found.add(value)
    return found


def test_every_claim_of_a_rule_is_in_the_precedence_list_once():
    assert len(set(CLASH_PRECEDENCE)) == len(CLASH_PRECEDENCE)
    assert set(CLASH_PRECEDENCE) == _claims_defined_by_rules()


def test_the_generic_claims_come_last():
    names = [f"{claim.__module__}.{claim.__name__}" for claim in CLASH_PRECEDENCE]
    assert names[-2:] == [
        "devlint.rules.dvl101_mixed_device_operands.claims_operation",
        "devlint.rules.dvl102_module_input_device.claims",
    ]


SOURCE = """\
import torch
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
table = torch.randn(100, 8, device=device)
loader = DataLoader(TensorDataset(torch.arange(100)), batch_size=10)
for (ids,) in loader:
    rows = table.index_select(0, ids)
"""


def test_an_unmoved_batch_used_as_indices_is_reported_once_as_an_unmoved_batch():
    """Both DVL301 (a batch never moved) and DVL105 (indices on another device) claim
    this clash; DVL301 comes first, so it alone reports it."""
    codes = [d.code for d in lint_source(SOURCE, "train.py")]
    assert codes == ["DVL301"]


def test_a_clash_whose_first_claimant_is_ignored_goes_to_the_next_claim():
    """With DVL301 ignored, the same clash is DVL105's: ignoring a rule must not hide
    a clash another enabled rule accepts."""
    settings = Settings(ignore=("DVL301",))
    codes = [d.code for d in lint_source(SOURCE, "train.py", settings)]
    assert codes == ["DVL105"]


def test_a_clash_no_enabled_rule_claims_is_not_reported():
    settings = Settings(ignore=("DVL301", "DVL105", "DVL101"))
    assert lint_source(SOURCE, "train.py", settings) == []


def test_each_claim_belongs_to_the_rule_of_its_module():
    assert [code_of(claim) for claim in CLASH_PRECEDENCE][:2] == ["DVL301", "DVL405"]
    assert code_of(CLASH_PRECEDENCE[-1]) == "DVL102"


def test_each_clash_rule_owns_claims_of_its_own_module_only():
    clash_rules = [rule for rule in all_rules() if issubclass(rule, ClashRule)]
    assert len(clash_rules) == 8
    for rule in clash_rules:
        assert rule.owns, rule.meta.code
        for claim in rule.owns:
            assert claim in CLASH_PRECEDENCE
            assert code_of(claim) == rule.meta.code
