"""DVL401: an attribute of the wrapped model read through its DataParallel/DDP wrapper."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import libcst as cst

from devlint.core import torch_api
from devlint.core.events import Facts, WrapperAttribute
from devlint.core.scopes import WrapperInfo
from devlint.core.syntax import dotted_name
from devlint.rulekit.wrapping import only_when_wrapped, severity_for, wrapper_info
from devlint.rulekit.message import place
from devlint.diagnostic import Severity
from devlint.rule import Finding, Fix, Rule, RuleMeta, RuntimeExpectation


class AttributeThroughWrapper(Rule):
    """## What it does
    Finds `model.fc`, `model.config`, `model.generate(...)`, `self.model.encode(x)`
    where `model` is an `nn.DataParallel` or `DistributedDataParallel` wrapper and
    the attribute belongs to the wrapped model, not to the wrapper or `nn.Module`.

    ## Why is this bad?
    The wrapper only has `nn.Module`'s attributes and its own (`module`,
    `device_ids`, `no_sync`, …); the model's custom attributes and methods live
    on `model.module`. Reading them through the wrapper raises `AttributeError:
    'DataParallel' object has no attribute 'fc'`. With conditional wrapping
    (`if torch.cuda.device_count() > 1: model = nn.DataParallel(model)`) it
    fails only on multi-GPU machines, after it has passed every test on one GPU.

    ## Fix safety
    Safe: the fix inserts `.module` (`model.module.fc`); with conditional
    wrapping it reaches the model with `getattr(model, "module", model).fc`,
    which works wrapped or not (offered when `model` is a plain name or
    attribute). Keeping a reference to the unwrapped model is the cleaner
    refactoring and left to you.

    ## References
    - [nn.DataParallel](https://pytorch.org/docs/stable/generated/torch.nn.DataParallel.html)
    - [DistributedDataParallel](https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html)
    """

    meta = RuleMeta(
        code="DVL401",
        name="attribute-through-wrapper",
        summary="an attribute of the wrapped model is read through its DataParallel/DDP wrapper",
        severity=Severity.ERROR,
        fixable=True,
        runtime=RuntimeExpectation(
            exception="AttributeError", message="object has no attribute", gpus=2
        ),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        for access in facts.of(WrapperAttribute):
            info = wrapper_info(access.wrapper)
            if info is None or torch_api.is_wrapper_attribute(access.name):
                continue  # the wrapper's own (`forward`, `state_dict`, `device_ids`, ...)
            base = facts.code_of(access.node.value)
            message = (
                f"`{access.name}` belongs to the model wrapped in {info.kind} at "
                + place(facts, info.node)
                + f", not to the wrapper `{base}`: use "
                f"`{base}.module.{access.name}`{only_when_wrapped(info)}"
            )
            yield Finding(
                access.node, message, severity_for(info), partial(_fix, facts, access, info)
            )


def _fix(facts: Facts, access: WrapperAttribute, info: WrapperInfo) -> Fix | None:
    """``model.fc`` → ``model.module.fc`` (``getattr(model, "module", model).fc`` when
    the model is wrapped on some machines only)."""
    wrapper = access.node.value
    if not info.conditional:
        inner = cst.Attribute(value=wrapper, attr=cst.Name("module"))
        title = f"Read `{access.name}` from `.module`"
    else:
        base = dotted_name(wrapper)
        if base is None:
            return None
        inner = cst.parse_expression(f'getattr({base}, "module", {base})')
        title = f"Read `{access.name}` from the wrapped model"
    return Fix(
        access.node, facts.module.code_for_node(access.node.with_changes(value=inner)), title
    )
