"""DVL204: a tensor created on the CPU and moved to a device at once."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import libcst as cst

from devlint.core.events import Facts, TensorMoved
from devlint.core.lattice import can_be_accelerator
from devlint.core.syntax import last_name
from devlint.core.torch_facts import RANDOM_FACTORIES
from devlint.core.torch_model import is_legacy_constructor
from devlint.core.values import NO_DEVICE, Kind
from devlint.diagnostic import Severity
from devlint.rulekit.fixes import with_keyword
from devlint.rule import Finding, Fix, Rule, RuleMeta, RuntimeExpectation

_DEVICE_VALUES = frozenset({Kind.DEVICE, Kind.STRING, Kind.SCALAR})
_LEGACY_ADVICE = (
    "a legacy constructor cannot create it there: use "
    "`torch.tensor(data, dtype=..., device=...)` or `torch.empty(size, dtype=..., device=...)`"
)


class CreateThenMove(Rule):
    """## What it does
    Finds `torch.zeros(...).to(device)`, `torch.randn(...).cuda()`,
    `torch.tensor(data).to(device)` and other factories called without
    `device=` whose result is moved to a device straight away.

    ## Why is this bad?
    The tensor is allocated and filled in host memory, then copied to the
    device: a needless allocation and a synchronous host-to-device copy, often
    inside the training loop. Creating it on the device (`device=`) does
    neither.

    A performance hint, so it is off by default: turn it on with
    `--extend-select DVL204` (or `extend-select` in `[tool.devlint]`).

    ## Fix safety
    The fix moves the device into the factory (`torch.zeros(3).to(device)` →
    `torch.zeros(3, device=device)`, `.cuda()` → `device="cuda"`); it is offered
    when the move names only a device, not a dtype or another tensor. Safe for
    deterministic factories (`zeros`, `ones`, `full`, `arange`, `eye`, `tensor`
    …). For random factories (`randn`, `rand`, `randint` …) the fix draws from
    the device's generator instead of the CPU's, so the numbers change under a
    fixed seed: that fix is unsafe. So is one on a factory given
    `requires_grad=True`, whose result becomes a leaf tensor with a `.grad`.

    No fix for the legacy typed constructors (`torch.LongTensor(...)`,
    `torch.FloatTensor(...)`, `torch.Tensor(...)` …): they build CPU tensors
    only, and given `device=` naming any other device they raise
    `RuntimeError: legacy constructor expects device type: cpu`. Nor is
    `torch.tensor(data, dtype=..., device=...)` a rewrite for all of them: it
    reads `torch.LongTensor(3)` as the number 3, not as a size. The message
    names both replacements; choose the one that fits.

    ## References
    - [Creation ops](https://pytorch.org/docs/stable/torch.html#creation-ops)
    - [Performance tuning guide: create tensors directly on the target device](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#create-tensors-directly-on-the-target-device)
    """

    meta = RuleMeta(
        code="DVL204",
        name="create-then-move",
        summary="a tensor is created on the CPU and moved to a device at once",
        severity=Severity.INFO,
        fixable=True,
        default_enabled=False,
        runtime=RuntimeExpectation(
            symptom="host-to-device copy of a tensor just created on the host"
        ),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        for move in facts.of(TensorMoved):
            factory = _fresh_factory(move)
            if factory is None:
                continue
            name = facts.code_of(factory.func)
            device = move.moved.device.describe()
            message = f"`{name}(...)` is created on the cpu and copied to {device}; "
            if is_legacy_constructor(facts, factory):
                message += _LEGACY_ADVICE
                yield Finding(move.node, message, self.meta.severity)
                continue
            message += "create it there with `device=`"
            random = _random(factory)
            if random:
                message += " (the random numbers then come from the device's generator)"
            fix = partial(_fix, facts, move.node, factory, random)
            yield Finding(move.node, message, self.meta.severity, fix)


def _fresh_factory(move: TensorMoved) -> cst.Call | None:
    """The factory call whose fresh cpu result the move copies to a device at once
    (``torch.zeros(3).to(device)``). Not one sampling with a generator: drawing on the
    cpu is how its numbers stay the same on every device."""
    factory, origin = move.tensor.node, move.tensor.value.origin
    if (
        isinstance(factory, cst.Call)
        and origin is not None
        and origin.node is factory
        and origin.tag == NO_DEVICE
        and can_be_accelerator(move.moved.device)
        and not any(arg.keyword and arg.keyword.value == "generator" for arg in factory.args)
    ):
        return factory
    return None


def _random(factory: cst.Call) -> bool:
    """A random factory: creating on the device changes the numbers drawn."""
    return last_name(factory.func) in RANDOM_FACTORIES


def _fix(facts: Facts, move: cst.Call, factory: cst.Call, random: bool) -> Fix | None:
    """``torch.zeros(3).to(device)`` → ``torch.zeros(3, device=device)``."""
    device = _device_text(facts, move)
    keywords = {arg.keyword.value for arg in factory.args if arg.keyword is not None}
    if device is None or "pin_memory" in keywords:
        return None
    created = with_keyword(factory, "device", device)
    if created is None:
        return None
    created = created.with_changes(
        lpar=[*move.lpar, *factory.lpar], rpar=[*factory.rpar, *move.rpar]
    )
    safe = not random and "requires_grad" not in keywords
    title = f"Create it with `device={device}`"
    return Fix(move, facts.module.code_for_node(created), title, safe)


def _device_text(facts: Facts, move: cst.Call) -> str | None:
    """The device a ``.to()``/``.cuda()`` names, as source text; None when it also
    converts (a dtype, another tensor's dtype) or copies."""
    method = move.func.attr.value if isinstance(move.func, cst.Attribute) else ""
    given = [arg for arg in move.args if not (arg.keyword and arg.keyword.value == "non_blocking")]
    if not given:
        return '"cuda"' if method == "cuda" else None
    if len(given) > 1 or given[0].star or given[0].keyword not in (None, "device"):
        return None
    value = facts.value_of(given[0].value)
    if value is None or value.kind not in _DEVICE_VALUES:
        return None
    return facts.module.code_for_node(given[0].value)
