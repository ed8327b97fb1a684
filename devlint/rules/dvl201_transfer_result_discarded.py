"""DVL201: a tensor transfer whose result is thrown away."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import libcst as cst

from devlint.core.events import DiscardedTransfer, Facts
from devlint.core.lattice import is_known
from devlint.core.syntax import descendants, dotted_name
from devlint.core.torch_api import CallKind, tensor_method, torch_function
from devlint.core.values import LOADER_BATCH, Kind
from devlint.diagnostic import Severity
from devlint.rulekit.fixes import ancestors, target_names
from devlint.rule import Finding, Fix, Rule, RuleMeta, RuntimeExpectation


class TransferResultDiscarded(Rule):
    """## What it does
    Finds `x.to(device)`, `x.cuda()` and `x.cpu()` on a tensor used as a bare
    statement. It stays silent where the copy is not lost (a notebook cell's
    last expression, which IPython displays) and where the lost copy changes
    nothing: the analysis knows the tensor is already on the device it is
    moved to, the local tensor left behind is read afterwards only as an
    argument PyTorch takes on any device (the targets and lengths of
    `F.ctc_loss`, beside its one tensor input), or nothing can read it again
    (`torch.zeros(1).to(device)`, a CUDA warm-up).

    ## Why is this bad?
    `Tensor.to()` returns a new tensor and leaves the original where it was:
    the statement copies the data and throws the copy away. The tensor stays
    on its old device, and the code that follows fails or silently runs on the
    CPU. `Module.to()` moves a module in place, so `model.to(device)` is fine
    and never reported.

    ## Fix safety
    The fix assigns the result back (`x = x.to(device)`), which is what the
    statement meant. It is safe for a plain name and unsafe for an attribute
    (`self.w = self.w.to(device)` raises a `TypeError` when `w` is a registered
    parameter). It is not offered for the variable of a loop over tensors
    (`for t in [a, b]: t.to(device)`): rebinding it would move nothing.

    ## References
    - [Tensor.to](https://pytorch.org/docs/stable/generated/torch.Tensor.to.html)
    - [Module.to moves in place](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.to)
    """

    meta = RuleMeta(
        code="DVL201",
        name="transfer-result-discarded",
        summary="a tensor is moved but the moved copy is discarded",
        severity=Severity.WARNING,
        fixable=True,
        runtime=RuntimeExpectation(symptom="was never moved to the device"),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        for transfer in facts.of(DiscardedTransfer):
            if (
                not _read_again(transfer)
                or _already_there(facts, transfer)
                or _left_behind_only_where_any_device_does(facts, transfer)
                or _displayed(facts, transfer)
            ):
                continue
            receiver = facts.code_of(transfer.receiver.node, limit=60)
            if _assignable(transfer.receiver.node):
                advice = f"assign the result (`{receiver} = {receiver}.{transfer.method}(...)`)"
            else:
                advice = f"keep the result (`x = {receiver}.{transfer.method}(...)`)"
            message = (
                f"`.{transfer.method}()` returns a new tensor and leaves `{receiver}` as it "
                f"was; {advice}"
            )
            yield Finding(
                transfer.node, message, self.meta.severity, partial(_fix, facts, transfer)
            )


def _read_again(transfer: DiscardedTransfer) -> bool:
    """Whether the code may read the receiver again: not a tensor the moved expression itself
    creates (``torch.zeros(1).to(device)``, a CUDA warm-up), which leaves nothing behind that
    the code uses. (A helper's result may be state the helper keeps.)"""
    origin = transfer.receiver.value.origin
    return origin is None or origin.node is not transfer.receiver.node


def _assignable(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name | cst.Attribute | cst.Subscript)


def _displayed(facts: Facts, transfer: DiscardedTransfer) -> bool:
    """A notebook cell's last expression: IPython shows the moved copy (``Out[n]``), which
    is what ``m.to(device)`` alone in a cell is written for."""
    (_, column), (end_line, _) = facts.span_of(transfer.node)
    return column == 0 and facts.layout.displays(end_line)


def _already_there(facts: Facts, transfer: DiscardedTransfer) -> bool:
    """The tensor is known to be on the device it is moved to (``x = x.to(device)`` earlier,
    or a helper's ``return feats.to(device)``): the lost copy is a no-op, and nothing stays
    behind on another device."""
    moved = facts.values.get(transfer.node)
    before = transfer.receiver.value.device
    return moved is not None and is_known(before) and moved.device == before


def _left_behind_only_where_any_device_does(facts: Facts, transfer: DiscardedTransfer) -> bool:
    """A local tensor whose every later read in its function (after dtype conversions such
    as ``x = x.int()``) is an argument PyTorch takes on any device: the lengths and targets of
    ``F.ctc_loss``, which computes with its one tensor input only. The lost copy then changes
    nothing. Not inside a loop, where the next pass may read it anywhere."""
    name = transfer.receiver.node
    if not isinstance(name, cst.Name):
        return False
    following: list[cst.BaseStatement] = []  # what runs after it, in each enclosing block
    child: cst.CSTNode = transfer.node
    for parent in ancestors(facts, transfer.node):
        if isinstance(parent, cst.For | cst.While | cst.ClassDef | cst.Module):
            return False
        if isinstance(parent, cst.IndentedBlock) and child in parent.body:
            following += parent.body[parent.body.index(child) + 1 :]
        if isinstance(parent, cst.FunctionDef):
            break
        child = parent
    for statement in following:
        if _converts_in_place(statement, name.value):
            continue
        reads = [
            node
            for node in descendants(statement)
            if isinstance(node, cst.Name) and node.value == name.value
        ]
        if not all(_any_device_argument(facts, read) for read in reads):
            return False
    return True


def _converts_in_place(statement: cst.CSTNode, name: str) -> bool:
    """``x = x.int()``: a dtype conversion, which stays where ``x`` is."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return False
    target, value = small.targets[0].target, small.value
    if not (isinstance(target, cst.Name) and target.value == name):
        return False
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
        return False
    receiver = value.func.value
    spec = tensor_method(value.func.attr.value)
    return (
        isinstance(receiver, cst.Name)
        and receiver.value == name
        and not value.args
        and spec is not None
        and spec.kind is CallKind.INHERIT
    )


def _any_device_argument(facts: Facts, read: cst.Name) -> bool:
    """``read`` is passed to a torch function that computes with one tensor input, and is not
    that input."""
    parents = ancestors(facts, read)
    arg, call = next(parents, None), next(parents, None)
    if not isinstance(arg, cst.Arg) or not isinstance(call, cst.Call) or arg.value is not read:
        return False
    callee = facts.values.get(call.func)
    if callee is None or callee.kind is not Kind.NAMESPACE or not isinstance(callee.ref, str):
        return False
    spec = torch_function(callee.ref)
    if spec is None or spec.kind is not CallKind.INHERIT or len(spec.tensor_params) != 1:
        return False
    if arg.keyword is not None:
        return arg.keyword.value != spec.tensor_params[0]
    positional = [given for given in call.args if given.keyword is None]
    return not arg.star and positional.index(arg) > 0


def _fix(facts: Facts, transfer: DiscardedTransfer) -> Fix | None:
    """``x = x.to(device)``, unless ``x`` is the variable of a loop over tensors."""
    node = transfer.receiver.node
    target = dotted_name(node)
    if target is None:
        return None
    origin = transfer.receiver.value.origin
    from_loader = origin is not None and origin.tag == LOADER_BATCH
    if isinstance(node, cst.Name) and not from_loader:
        for loop in ancestors(facts, transfer.node):
            if isinstance(loop, cst.For) and node.value in _names(loop.target):
                return None
    call = facts.module.code_for_node(transfer.node)
    safe = isinstance(node, cst.Name)
    return Fix(transfer.node, f"{target} = {call}", f"Assign the result to `{target}`", safe)


def _names(target: cst.BaseExpression) -> set[str]:
    return {name.value for name in target_names(target)}
