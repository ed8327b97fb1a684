"""DVL101: tensors on different devices meet in one operation."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core.conflicts import first_per_source, hard_coded
from devlint.rulekit.describe import clash_phrase, origin_phrase, when_it_fails
from devlint.rulekit.message import place
from devlint.core.events import Clash, DeviceDefaultKept, Facts, ModuleCall, OperandsMeet
from devlint.diagnostic import Severity
from devlint.rule import ClashRule, Finding, RuleMeta, RuntimeExpectation, owned_clashes


def claims_hard_coded(facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> bool:
    """A literal ``.cuda()`` / ``device="cuda"`` against a device chosen at run time."""
    return hard_coded(clash.first, clash.second)


def claims_operation(facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> bool:
    """Any clash in an operation that a more specific rule did not claim."""
    return isinstance(event, OperandsMeet)


class MixedDeviceOperands(ClashRule):
    """## What it does
    Finds operators (`+ - * / @ ==` …), torch functions (`torch.cat`, `torch.matmul`,
    `torch.where`, …) and tensor methods (`x.add(y)`, `x.masked_fill(m, v)`, …) whose
    tensor operands live on different devices.

    ## Why is this bad?
    PyTorch refuses to combine a CUDA tensor with a CPU tensor (or tensors on two
    GPUs) and raises `RuntimeError: Expected all tensors to be on the same device`,
    often only after the job has run for a while on a GPU machine.

    PyTorch's exceptions are honoured: a CPU 0-dim tensor may join a CUDA
    elementwise operation, Python scalars always may, advanced indexing
    `cuda_t[cpu_index]` is allowed and `copy_` crosses devices by design.

    A definite CPU tensor meeting a tensor on a device variable (`device`,
    `args.device`, `"cuda" if torch.cuda.is_available() else "cpu"`) is a
    warning: it fails whenever that device is a GPU. A tensor or module put on a
    hard-coded accelerator (`.cuda()`, `device="cuda"`, `torch.cuda.LongTensor`)
    that meets one whose device the caller chooses (a tensor parameter of a
    device-agnostic function, the inputs of a module's `forward`), in a file
    that picks its device at run time elsewhere, is a warning too, reported
    where the accelerator is hard-coded: it fails on a CPU-only machine and
    lands on the current GPU rather than its partner's. Code that hard-codes
    `.cuda()` throughout (GPU-only scripts) is not reported, nor is a bare
    `.cuda()` meeting a tensor the same function hands to a collective
    (`dist.all_reduce`): that tensor is on the process's GPU, which `.cuda()`
    names once the process group's setup called `torch.cuda.set_device`. A
    call that leaves a local function's `device="cuda"` default in place
    (`get_batch(keys)` for `def get_batch(keys, device="cuda")`) where the
    caller holds its own run-time `device` is a warning too: what the callee
    places lands on the hard-coded default. More specific causes have their
    own rules: DataLoader batches (DVL301), plain module attributes (DVL104),
    factories without `device=` in functions (DVL103), indices (DVL105) and
    loss weights (DVL106).

    ## Fix safety
    No automatic fix: which side should move depends on the program. Usually
    the CPU side was created without `device=` or never moved.

    ## References
    - [Tensor attributes: torch.device](https://pytorch.org/docs/stable/tensor_attributes.html#torch-device)
    - [CUDA semantics](https://pytorch.org/docs/stable/notes/cuda.html)
    """

    meta = RuleMeta(
        code="DVL101",
        name="mixed-device-operands",
        summary="tensors on different devices meet in one operation",
        severity=Severity.ERROR,
        runtime=RuntimeExpectation(exception="RuntimeError", message="on the same device"),
    )

    owns = (claims_operation,)
    every_clash = True

    def check(self, facts: Facts) -> Iterator[Finding]:
        """Any other clash in an operation; then a literal ``.cuda()`` against a run-time
        device, once per source; then a hard-coded device default a call keeps."""
        yield from super().check(facts)
        for event, clash in first_per_source(owned_clashes(facts, claims_hard_coded)):
            yield _hard_coded(facts, event, clash)
        reported: set[int] = set()
        for kept in facts.of(DeviceDefaultKept):
            if id(kept.node) not in reported:
                reported.add(id(kept.node))
                yield _default_kept(facts, kept)


def _hard_coded(facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> Finding:
    """Reported where the accelerator is hard-coded: that line is what needs the fix."""
    source = clash.first.value.origin.node  # _believed: a literal `.cuda()` / device="cuda"
    partner = clash.second
    message = (
        f"`{facts.code_of(source)}` is on {clash.first.value.device.describe()} (hard-coded) "
        f"but meets `{facts.code_of(partner.node)}` at "
        + place(facts, event.node)
        + f", which is on {partner.value.device.describe()}"
        + origin_phrase(facts, partner.value.origin)
        + f"{when_it_fails(clash)}; "
        "place it on its partner's device (`.to(x.device)`, `device=x.device`)"
    )
    return Finding(source, message, clash.severity)


def _default_kept(facts: Facts, kept: DeviceDefaultKept) -> Finding:
    """Reported at the call: passing the caller's device there is the fix."""
    name = kept.parameter.name.value
    held = kept.caller.device
    message = (
        f"`{facts.code_of(kept.node)}` leaves `{name}` at its hard-coded default "
        f"`{facts.code_of(kept.parameter.default)}` ("
        + place(facts, kept.parameter)
        + f"), so what it places lands on {kept.default.describe()} while the caller's device "
        f"is {held.describe()}"
        + origin_phrase(facts, kept.caller.origin)
        + f"; this fails when {held.describe()} is the CPU or another GPU: pass `{name}={name}`"
    )
    return Finding(kept.node, message, Severity.WARNING)
