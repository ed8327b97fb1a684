"""DVL104: a plain tensor attribute (or a plain list of modules) that .to() will not move."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from functools import partial

import libcst as cst

from devlint.core.conflicts import first_per_source, source_tag
from devlint.rulekit.describe import clash_phrase
from devlint.core.events import Clash, Facts, ModuleCall, OperandsMeet
from devlint.core.values import PLAIN_ATTRIBUTE, Kind
from devlint.diagnostic import Severity
from devlint.rulekit.fixes import ancestors, statement_indent, torch_spelling
from devlint.rule import ClashRule, Finding, Fix, RuleMeta, RuntimeExpectation

ADVICE = (
    "`Module.to()` moves only parameters, buffers and registered submodules: use "
    "`self.register_buffer(...)` for tensors and `nn.ModuleList`/`nn.ModuleDict` for modules"
)


def claims(facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> bool:
    """A plain tensor attribute of a module (or a module in a plain list)."""
    return source_tag(clash) == PLAIN_ATTRIBUTE


class UnregisteredTensorAttribute(ClashRule):
    """## What it does
    Finds a tensor stored on an `nn.Module` as a plain attribute
    (`self.mask = torch.tril(...)`, `self.anchors = torch.tensor(...)`) or
    submodules kept in a plain Python list or dict (`self.layers =
    [nn.Linear(...)]`), used in a method together with inputs or parameters.

    It stays silent on an attribute that `__init__` makes a parameter or
    buffer on some paths and a frozen placeholder on others (`nn.Parameter`
    with a bias, `torch.Tensor(n).requires_grad_(False)` without one): which
    one a module holds is its configuration, and code that uses it tells them
    apart (`if bias.requires_grad:`). A plain tensor that becomes a parameter
    only in some configurations is still reported.

    ## Why is this bad?
    `model.to(device)` moves parameters, buffers and registered submodules
    only. The plain attribute stays on the CPU, and the first forward pass on
    a GPU fails with `RuntimeError: Expected all tensors to be on the same
    device`. A plain list also hides its modules from `parameters()`, so the
    optimizer never trains them, and from `state_dict()`.

    ## Fix safety
    Unsafe. For a tensor the fix registers it where `__init__` sets it:
    `self.mask = t` → `mask = t` and `self.register_buffer("mask", mask,
    persistent=False)`, which keeps it out of `state_dict()` so existing
    checkpoints still load, but `model.half()` now converts it and `buffers()`
    lists it. For modules in a plain list or dict it wraps the container in
    `nn.ModuleList` / `nn.ModuleDict` (string keys only): their parameters then
    reach the optimizer and their keys `state_dict()`, so old checkpoints no
    longer load strictly.

    ## References
    - [Module.register_buffer](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_buffer)
    - [nn.ModuleList](https://pytorch.org/docs/stable/generated/torch.nn.ModuleList.html)
    """

    meta = RuleMeta(
        code="DVL104",
        name="unregistered-tensor-attribute",
        summary="a plain tensor attribute (or a plain list of modules) that .to() will not move",
        severity=Severity.ERROR,
        fixable=True,
        runtime=RuntimeExpectation(exception="RuntimeError", message="on the same device"),
    )

    owns = (claims,)
    advice = ADVICE

    def finding(self, facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> Finding:
        return replace(super().finding(facts, event, clash), fix=partial(_fix, facts, clash))


def _fix(facts: Facts, clash: Clash) -> Fix | None:
    """Register what ``__init__`` stores as ``self.<name> = ...``."""
    origin = clash.first.value.origin
    found = _assignment(facts, origin.node) if origin is not None else None
    if found is None:
        return None
    init, assign, owner, name = found
    if clash.first.value.kind is Kind.TENSOR:
        return _register_buffer(facts, init, assign, owner, name)
    container = _container(facts, assign.value)
    if container is None:
        return None
    value = facts.module.code_for_node(assign.value.with_changes(lpar=[], rpar=[]))
    wrapped = f"{container}({value})"
    return Fix(assign.value, wrapped, f"Keep `{name}` in an `{container}`", safe=False)


def _assignment(
    facts: Facts, created: cst.CSTNode
) -> tuple[cst.FunctionDef, cst.Assign, str, str] | None:
    """``__init__``, the ``self.<name> = ...`` that stores what ``created`` made, self's name."""
    assign = next((n for n in ancestors(facts, created) if isinstance(n, cst.Assign)), None)
    init = next((n for n in ancestors(facts, created) if isinstance(n, cst.FunctionDef)), None)
    if assign is None or init is None or init.name.value != "__init__" or not init.params.params:
        return None
    owner = init.params.params[0].name.value
    target = assign.targets[0].target if len(assign.targets) == 1 else None
    if not (
        isinstance(target, cst.Attribute)
        and isinstance(target.value, cst.Name)
        and target.value.value == owner
    ):
        return None
    return init, assign, owner, target.attr.value


def _register_buffer(
    facts: Facts, init: cst.FunctionDef, assign: cst.Assign, owner: str, name: str
) -> Fix | None:
    """``self.mask = t`` → ``mask = t`` and ``self.register_buffer("mask", mask, ...)``."""
    if not _after_super_init(facts, init, assign):
        return None  # register_buffer fails before nn.Module.__init__ has run
    value = facts.module.code_for_node(assign.value)
    indent = statement_indent(facts, assign)
    title = f"Register `{name}` as a buffer"
    if isinstance(assign.value, cst.Name):
        register = f'{owner}.register_buffer("{name}", {value}, persistent=False)'
    elif indent is not None and _sole_statement(facts, assign) and not _uses_name(init, name):
        newline = facts.module.default_newline
        register = (
            f"{name} = {value}{newline}"
            f'{indent}{owner}.register_buffer("{name}", {name}, persistent=False)'
        )
    else:
        register = f'{owner}.register_buffer("{name}", {value}, persistent=False)'
    return Fix(assign, register, title, safe=False)


def _container(facts: Facts, value: cst.BaseExpression) -> str | None:
    """``nn.ModuleList``/``nn.ModuleDict`` as the file spells it, for a list or dict display."""
    if isinstance(value, cst.List | cst.ListComp | cst.Tuple):
        return torch_spelling(facts, "torch.nn.ModuleList")
    if isinstance(value, cst.Dict) and all(
        isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)
        for element in value.elements
    ):
        return torch_spelling(facts, "torch.nn.ModuleDict")
    return None


def _after_super_init(facts: Facts, init: cst.FunctionDef, assign: cst.Assign) -> bool:
    """Whether a statement before the assignment calls ``super().__init__()``."""
    statement = next(n for n in ancestors(facts, assign) if isinstance(n, cst.BaseStatement))
    for earlier in init.body.body:
        if earlier is statement:
            return False
        if "__init__(" in facts.module.code_for_node(earlier):
            return True
    return False


def _sole_statement(facts: Facts, assign: cst.Assign) -> bool:
    line = next(
        (n for n in ancestors(facts, assign) if isinstance(n, cst.SimpleStatementLine)), None
    )
    return line is not None and len(line.body) == 1


def _uses_name(function: cst.FunctionDef, name: str) -> bool:
    """Whether ``name`` appears as a variable (not an attribute) in ``function``."""
    stack: list[cst.CSTNode] = [function]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and node.value == name:
            return True
        stack.extend([node.value] if isinstance(node, cst.Attribute) else node.children)
    return False
