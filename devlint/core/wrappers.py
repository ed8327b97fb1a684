"""nn.DataParallel and DistributedDataParallel: what wrapping changes.

A wrapper keeps the wrapped module's device, scatters CPU inputs itself
(DataParallel), gathers outputs on ``output_device`` (default
``device_ids[0]``), has only nn.Module's and its own attributes (the model's
live on ``.module``), and prefixes its ``state_dict`` keys with ``module.``.
"""

from __future__ import annotations

import libcst as cst

from devlint.core import torch_facts
from devlint.core.events import (
    CheckpointSave,
    Operand,
    StateDictLoad,
    WrapperAttribute,
    WrapperCall,
    WrapperCreated,
)
from devlint.core.lattice import Concrete, Device, is_known
from devlint.core.roles import InterpretsCalls, RunsStatements
from devlint.core.scopes import Args, WrapperInfo
from devlint.core.state import Part
from devlint.core.values import (
    UNKNOWN_VALUE,
    WRAPPED_STATE,
    WRAPPER_OUTPUT,
    Kind,
    Origin,
    Value,
    is_tensor_like,
    used_as_module,
)


class Wrappers(Part):
    """Creation, attributes, calls and checkpoints of data-parallel wrappers."""

    def connect(self, *, calls: InterpretsCalls, flow: RunsStatements) -> None:
        self.calls = calls
        self.flow = flow

    def wrap(self, qualname: str, node: cst.Call, args: Args) -> Value:
        """``nn.DataParallel(model, device_ids=[0, 1], output_device=0)``."""
        given = args.get(0, "module")
        inner = given[1] if given else UNKNOWN_VALUE
        if inner.kind is Kind.UNKNOWN:  # DDP(GPT(config)): only a module can be wrapped
            inner = used_as_module(inner)
        ids = args.get(1, "device_ids")
        device_ids = None
        if ids is not None and isinstance(ids[0], (cst.List, cst.Tuple)):
            device_ids = tuple(
                (element.value, self.state.values.get(element.value, UNKNOWN_VALUE))
                for element in ids[0].elements
            )
        output = args.get(2, "output_device")
        info = WrapperInfo(torch_facts.WRAPPERS[qualname], node, inner, device_ids, output)
        wrapper = Value(Kind.WRAPPER, inner.device, inner.origin, stateful=True, ref=info)
        self.state.record(WrapperCreated(node, wrapper))
        return wrapper

    def wrapper_attribute(self, wrapper: Value, name: str, node: cst.Attribute) -> Value:
        """``wrapped.module`` is the model; other model attributes are not on the wrapper."""
        info = wrapper.ref
        if name == "module" and isinstance(info, WrapperInfo):
            return info.inner.with_device(wrapper.device, wrapper.origin)
        self.state.record(WrapperAttribute(node, wrapper, name))
        return UNKNOWN_VALUE

    def wrapper_call(self, node: cst.Call, wrapper: Value, args: Args) -> Value:
        """Its forward: inputs are scattered, outputs gathered on the output device."""
        inputs = tuple(Operand(*given) for given in args.all() if is_tensor_like(given[1]))
        self.state.record(WrapperCall(node, Operand(node.func, wrapper), inputs))
        device = self.output_device(wrapper)
        if not is_known(device):
            return Value(Kind.UNKNOWN)
        origin = Origin("gathered by {} on its output device", node, node.func, WRAPPER_OUTPUT)
        return Value(Kind.TENSOR, device, origin, 1)

    def output_device(self, wrapper: Value) -> Device:
        info = wrapper.ref
        if not isinstance(info, WrapperInfo) or info.distributed:
            return wrapper.device
        chosen = info.output_device or (info.device_ids[0] if info.device_ids else None)
        if chosen is None:
            return wrapper.device
        device = self.calls.device_argument(*chosen)
        return device if isinstance(device, Concrete) else wrapper.device

    def wrapper_state_dict(self, node: cst.Call, receiver_node: cst.BaseExpression) -> Value:
        origin = Origin("`state_dict()` of the wrapper {}", node, receiver_node, WRAPPED_STATE)
        return Value(Kind.MAPPING, origin=origin)

    def note_checkpoint(self, qualname: str, node: cst.Call, args: Args) -> None:
        if qualname in torch_facts.CHECKPOINT_SAVES:
            given = args.get(0, "obj")
            if given is not None:
                self.state.record(CheckpointSave(node, given[1], self.flow.function))

    def note_state_dict_load(
        self, node: cst.Call, module_node: cst.BaseExpression, module: Value
    ) -> None:
        self.state.record(StateDictLoad(node, Operand(module_node, module)))
