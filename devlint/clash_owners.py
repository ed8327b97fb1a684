"""Which rule reports a clash: the rules' own claims, in one order, most specific first.

The analysis finds the clashes it can justify (``core.conflicts.clashes``); each
one is reported by exactly one rule. Every rule that reports clashes decides in
its own module which ones it claims; this list only says whose claim comes
first where two overlap. A tag rule (an unmoved batch, a plain attribute, a
factory without ``device=``) outranks the generic rules, whose message could
only say "mixed devices". Only the claims of the rules enabled for the file
take part: a clash that a disabled rule would claim goes to the next claim, so
``--ignore DVL301`` leaves an unmoved batch to the rules still on.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import cache

from devlint.core.conflicts import clashes
from devlint.core.events import Claim, Facts
from devlint.rules import all_rules
from devlint.rules import dvl101_mixed_device_operands as dvl101
from devlint.rules import dvl102_module_input_device as dvl102
from devlint.rules import dvl103_tensor_created_without_device as dvl103
from devlint.rules import dvl104_unregistered_tensor_attribute as dvl104
from devlint.rules import dvl105_index_on_other_device as dvl105
from devlint.rules import dvl106_loss_weight_device as dvl106
from devlint.rules import dvl301_loader_batch_not_moved as dvl301
from devlint.rules import dvl405_output_device_mismatch as dvl405

CLASH_PRECEDENCE: tuple[Claim, ...] = (
    dvl301.claims,  # a DataLoader batch that was never moved
    dvl405.claims,  # a DataParallel output meeting a tensor on another GPU
    dvl101.claims_hard_coded,  # a literal `.cuda()` against a device chosen at run time
    dvl104.claims,  # a plain tensor attribute (or a module in a plain list)
    dvl106.claims_own_weight,  # the criterion's own weight left on the cpu
    dvl103.claims,  # a factory without `device=` meeting what came into the function
    dvl105.claims,  # indices on another device
    dvl106.claims_weight_argument,  # a `weight=` / `pos_weight=` argument, a loss's operands
    dvl101.claims_operation,  # any other clash in an operation
    dvl102.claims,  # any other clash at a module call
)


@cache
def code_of(claim: Claim) -> str:
    """The code of the rule whose module defines ``claim`` (looked up once per claim)."""
    return next(rule.meta.code for rule in all_rules() if rule.__module__ == claim.__module__)


def assign(facts: Facts, enabled: Collection[str]) -> None:
    """Give each clash of the file to the first claim of an ``enabled`` rule that accepts
    it (once per file)."""
    claims = [claim for claim in CLASH_PRECEDENCE if code_of(claim) in enabled]
    owned = []
    for event, clash in clashes(facts):
        owner = next((claim for claim in claims if claim(facts, event, clash)), None)
        if owner is not None:
            owned.append((event, clash, owner))
    facts.clash_owners = owned
