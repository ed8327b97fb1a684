"""DVL108: the lengths given to pack_padded_sequence are on an accelerator."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import libcst as cst

from devlint.core.events import Facts, SequencePacked
from devlint.core.lattice import MODULE_DEVICE, Device, Symbol, can_be_accelerator
from devlint.core.lattice import is_hard_coded_accelerator as hard_coded
from devlint.diagnostic import Severity
from devlint.rule import Finding, Fix, Rule, RuleMeta, RuntimeExpectation
from devlint.rulekit.describe import failure_condition, operand_phrase
from devlint.rulekit.fixes import receiver_text


class PackPaddedLengthsOnDevice(Rule):
    """## What it does
    Finds `torch.nn.utils.rnn.pack_padded_sequence(input, lengths)` given
    `lengths` that this file placed on an accelerator: computed from a batch
    moved to the device (`lengths = mask.sum(1)` after `mask.to(device)`),
    created with `device=`, or moved there.

    It stays silent where the lengths' device is a caller's choice (a
    parameter, or an input of a module's `forward`): callers often keep the
    lengths on the CPU on purpose, which is what PyTorch asks.

    ## Why is this bad?
    `pack_padded_sequence` reads the lengths on the host to build the packed
    batch, and since PyTorch 1.7 refuses a tensor of lengths on a GPU:
    `RuntimeError: 'lengths' argument should be a 1D CPU int64 tensor, but got
    1D cuda:0 Long tensor`. The lengths usually travel with the batch, so the
    code runs on a CPU and fails at the first batch on a GPU.

    ## Fix safety
    The fix passes `lengths.cpu()`, which PyTorch would otherwise have to copy
    to the host anyway; the result is the same on every device. It is safe.

    ## References
    - [torch.nn.utils.rnn.pack_padded_sequence](https://pytorch.org/docs/stable/generated/torch.nn.utils.rnn.pack_padded_sequence.html)
      ("must be on the CPU if provided as a tensor")
    """

    meta = RuleMeta(
        code="DVL108",
        name="pack-padded-lengths-on-device",
        summary="the lengths given to pack_padded_sequence are on an accelerator",
        severity=Severity.ERROR,
        fixable=True,
        runtime=RuntimeExpectation(
            exception="RuntimeError", message="'lengths' argument should be a 1D CPU int64 tensor"
        ),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        for packed in facts.of(SequencePacked):
            device = packed.lengths.value.device
            if not _placed_here_on_an_accelerator(device):
                continue
            severity = Severity.ERROR if hard_coded(device) else Severity.WARNING
            message = (
                operand_phrase(facts, packed.lengths)
                + ", but `pack_padded_sequence` reads its lengths on the host and refuses them "
                f"on a GPU{failure_condition(device)}; pass them on the CPU (`.cpu()`, or a list)"
            )
            node = packed.lengths.node
            yield Finding(node, message, severity, partial(_fix, facts, node))


def _placed_here_on_an_accelerator(device: Device) -> bool:
    """On an accelerator by this file's own doing: not where a caller put a parameter or
    a module's input, which the caller may well have kept on the CPU."""
    if isinstance(device, Symbol) and (device.tensor or device == MODULE_DEVICE):
        return False
    return can_be_accelerator(device)


def _fix(facts: Facts, lengths: cst.BaseExpression) -> Fix:
    """``lengths`` → ``lengths.cpu()``."""
    text = f"{receiver_text(facts, lengths)}.cpu()"
    return Fix(lengths, text, f"Pass `{facts.code_of(lengths)}` on the CPU")
