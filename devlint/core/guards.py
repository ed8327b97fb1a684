"""Branch tests that say where a tensor lives: ``x.is_cuda``, ``x.device.type == "cpu"``.

Inside such a branch the test is a fact: a tensor that is "cuda when available"
is on cuda where ``x.is_cuda`` holds and on the cpu where it does not, and a
tensor the analysis placed on the other side of the test is somewhere it cannot
see (unknown, never a guess). Under ``not torch.cuda.is_available()`` nothing is
on cuda, so "cuda when available" is the cpu.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from devlint.core import torch_facts
from devlint.core.binder import Env, Narrowing
from devlint.core.lattice import CPU, MAYBE_ACCEL, UNKNOWN, Concrete, Device, Symbol, is_known
from devlint.core.syntax import (
    dotted_name,
    last_name,
    parse_device_string,
    string_value,
    without_not,
)
from devlint.core.values import Origin, is_tensor_like

_CUDA = Concrete("cuda")


@dataclass(frozen=True, slots=True)
class DeviceTest:
    """Where the test holds, ``subject`` is on the cpu (``cpu``) or an accelerator (not).

    ``tensor`` says whether ``subject`` names a tensor (``x`` of ``x.device.type``) or a
    device variable (``device`` of ``device.type``).
    """

    subject: str
    tensor: bool
    cpu: bool


def availability_test(
    test: cst.BaseExpression, holds_availability: Callable[[cst.BaseExpression], bool]
) -> bool | None:
    """True for ``torch.cuda.is_available()`` or a name that holds it (``train_on_gpu``, as
    ``holds_availability`` says), False for their negation, else None."""
    test, holds = without_not(test)
    if (
        isinstance(test, cst.Call)
        and not test.args
        and dotted_name(test.func) in torch_facts.CUDA_AVAILABILITY
    ):
        return holds
    if isinstance(test, cst.Name | cst.Attribute) and holds_availability(test):
        return holds
    return None


def proxy_test(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """``(x, holds)`` for ``is_torch_fx_proxy(x)`` / ``isinstance(x, torch.fx.Proxy)`` and
    their negation: where the test holds, ``x`` is a symbolic-tracing proxy that records
    operations for a graph run later, on a device the analysis cannot see."""
    test, holds = without_not(test)
    if not isinstance(test, cst.Call) or not test.args:
        return None
    name = last_name(test.func)
    proxy = name in torch_facts.FX_PROXY_CHECKS and len(test.args) == 1
    if name == "isinstance" and len(test.args) == 2:
        proxy = dotted_name(test.args[1].value) in torch_facts.FX_PROXY_CLASSES
    subject = dotted_name(test.args[0].value) if proxy else None
    return (subject, holds) if subject is not None else None


def requires_grad_test(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """``(x, holds)`` for ``x.requires_grad`` and its negation. Code tells a trained tensor
    from the plain one another configuration keeps this way (speechbrain's ops take
    ``bias`` that is a parameter or, without a bias, a tensor that ``requires_grad_(False)``):
    where the test holds, ``x`` is the one the analysis cannot tell from the other."""
    test, holds = without_not(test)
    if not isinstance(test, cst.Attribute) or test.attr.value != "requires_grad":
        return None
    subject = dotted_name(test.value)
    return (subject, holds) if subject is not None else None


def unseen(env: Env, subject: str) -> list[Narrowing]:
    """Where a test says ``subject`` is something the analysis cannot place (a tracing proxy,
    the trained one of two tensors), its device is unknown."""
    value = env.get(subject)
    if value is None or not is_tensor_like(value):
        return []
    return [env.narrow(subject, value.with_device(UNKNOWN, None))]


def device_test(
    test: cst.BaseExpression, literal: Callable[[cst.BaseExpression], Concrete | None]
) -> DeviceTest | None:
    """The device fact a test states; ``literal`` gives the device a comparand denotes
    (``"cpu"``, ``torch.device("cpu")``, a variable holding one), None when it is no device."""
    test, holds = without_not(test)
    if isinstance(test, cst.Attribute) and test.attr.value == "is_cuda":
        subject = dotted_name(test.value)
        return DeviceTest(subject, True, not holds) if subject is not None else None
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    comparison = test.comparisons[0]
    if isinstance(comparison.operator, cst.NotEqual | cst.IsNot):
        holds = not holds
    elif not isinstance(comparison.operator, cst.Equal | cst.Is):
        return None
    for side, other in ((test.left, comparison.comparator), (comparison.comparator, test.left)):
        device = _string_device(other) or literal(other)
        found = _subject(side)
        if device is not None and found is not None:
            subject, tensor = found
            return DeviceTest(subject, tensor, (device.type == "cpu") == holds)
    return None


def place(env: Env, test: DeviceTest, cpu: bool, by_test: Origin) -> list[Narrowing]:
    """Narrow what ``test`` is about on a path where it says "cpu" (``cpu``) or not."""
    value = env.get(test.subject)
    if test.tensor and value is not None and is_tensor_like(value):
        device = refined(value.device, cpu)
        if device is None:
            return []
        origin = by_test if device == CPU else value.origin if is_known(device) else None
        return [env.narrow(test.subject, value.with_device(device, origin))]
    if not cpu:
        return []
    path = f"{test.subject}.device" if test.tensor else test.subject
    variable = env.get(path)
    symbol = variable.device if variable is not None else Symbol(path)
    return [
        env.narrow(name, bound.with_device(UNKNOWN, None))
        for name, bound in list(env.bindings.items())
        if refined_variable(bound.device, symbol) is not None and is_tensor_like(bound)
    ]


def no_accelerator(env: Env, by_test: Origin) -> list[Narrowing]:
    """Where no accelerator is available, "cuda when available" is the cpu."""
    return [
        env.narrow(name, value.with_device(CPU, by_test))
        for name, value in list(env.bindings.items())
        if value.device is MAYBE_ACCEL and is_tensor_like(value)
    ]


def refined(device: Device, cpu: bool) -> Device | None:
    """A tensor's device where a test says it is (not) on the cpu; None: unchanged."""
    if device is MAYBE_ACCEL:
        return CPU if cpu else _CUDA
    if isinstance(device, Concrete) and device.type != "meta" and (device.type == "cpu") != cpu:
        return UNKNOWN  # the analysis disagrees with the test: it cannot see this branch
    return None


def refined_variable(device: Device, variable: Device) -> Device | None:
    """Under ``variable.type == "cpu"``: what was placed on that device variable is
    unknown to the analysis (its cpu case only), anything else is unchanged (None)."""
    return UNKNOWN if isinstance(variable, Symbol) and device == variable else None


def _string_device(node: cst.BaseExpression) -> Concrete | None:
    text = string_value(node)
    return parse_device_string(text) if text is not None else None


def _subject(node: cst.BaseExpression) -> tuple[str, bool] | None:
    """``x.device.type`` / ``x.device`` → (x, tensor); ``device.type`` / ``device`` → (device,
    variable)."""
    if isinstance(node, cst.Attribute) and node.attr.value == "type":
        node = node.value
    if isinstance(node, cst.Attribute) and node.attr.value == "device":
        path = dotted_name(node.value)
        return (path, True) if path is not None else None
    path = dotted_name(node)
    return (path, False) if path is not None else None
