"""DVL403: a DataParallel model whose parameters are not on device_ids[0]."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.rulekit.describe import origin_phrase
from devlint.rulekit.message import place
from devlint.core.events import Facts, WrapperCall
from devlint.core.lattice import CPU, Concrete
from devlint.rulekit.wrapping import only_when_wrapped, severity_for, wrapper_info
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation


class DataParallelDevice(Rule):
    """## What it does
    Finds an `nn.DataParallel` model called while its parameters are not on
    `device_ids[0]`: the wrapped model was never moved (it is on the CPU), was
    moved to `cuda:1` while `device_ids` starts at 0 (the default), or the
    wrapper was moved to another device after wrapping.

    ## Why is this bad?
    DataParallel replicates the module from `device_ids[0]` on every forward
    pass and checks it first: `RuntimeError: module must have its parameters
    and buffers on device cuda:0 (device_ids[0]) but found one of them on
    device: cpu`. On a machine without GPUs DataParallel is a no-op, so the
    bug appears only on the GPU machine.

    ## Fix safety
    No automatic fix: move the model to `device_ids[0]` (`model.to("cuda:0")`,
    or `model.to(device)`) before or after wrapping.

    ## References
    - [nn.DataParallel](https://pytorch.org/docs/stable/generated/torch.nn.DataParallel.html)
    """

    meta = RuleMeta(
        code="DVL403",
        name="dataparallel-device",
        summary="a DataParallel model's parameters are not on device_ids[0]",
        severity=Severity.ERROR,
        runtime=RuntimeExpectation(
            exception="RuntimeError",
            message="module must have its parameters and buffers on device",
            gpus=2,
        ),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        reported: set[int] = set()
        for call in facts.of(WrapperCall):
            wrapper = call.wrapper.value
            info = wrapper_info(wrapper)
            if info is None or info.distributed or id(info.node) in reported:
                continue
            first = _first_device(info)
            device = wrapper.device
            wrong = device == CPU or (
                isinstance(device, Concrete)
                and device.type == "cuda"
                and device.index is not None
                and device.index != first.index
            )
            if not wrong:
                continue
            reported.add(id(info.node))
            message = (
                "the model wrapped at "
                + place(facts, info.node)
                + f" is on {device.describe()}"
                + origin_phrase(facts, wrapper.origin)
                + f", but DataParallel needs its parameters on {first.describe()} (device_ids[0])"
                f"{only_when_wrapped(info)}"
            )
            yield Finding(call.node, message, severity_for(info))


def _first_device(info) -> Concrete:
    if info.device_ids:
        number = info.device_ids[0][1].ref
        if isinstance(number, int):
            return Concrete("cuda", number)
    return Concrete("cuda", 0)
