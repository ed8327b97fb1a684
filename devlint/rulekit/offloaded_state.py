"""State dicts that PyTorch's distributed APIs gather on the CPU, so a checkpoint of them
holds no device tensors.

- ``FSDP.full_optim_state_dict(model, optim)`` consolidates the optimizer state on the CPU;
- ``model.state_dict()`` inside ``with FSDP.state_dict_type(model, FULL_STATE_DICT,
  FullStateDictConfig(offload_to_cpu=True))``, or in a file that sets such a type with
  ``FSDP.set_state_dict_type``, returns CPU tensors;
- ``get_model_state_dict(model, options=StateDictOptions(cpu_offload=True))`` and its siblings.

The config is often made once at the top of the module (``fullstate_save_policy =
FullStateDictConfig(offload_to_cpu=True, rank0_only=True)``) and named where it is used.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from devlint.core import torch_facts
from devlint.core.syntax import descendants, last_name


class OffloadedState:
    """Which values of one scope (a writer's function, or the module) are state dicts that
    PyTorch gathered on the CPU."""

    def __init__(self, module: cst.Module, scope_nodes: Sequence[cst.CSTNode]) -> None:
        self._module = module
        self._scope_nodes = scope_nodes
        self._configs: set[str] | None = None

    def holds(self, value: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """Whether ``value``, evaluated at ``at``, is a state dict gathered on the CPU."""
        if not isinstance(value, cst.Call):
            return False
        name = last_name(value.func)
        if name in torch_facts.OFFLOADED_STATE_CALLS:
            return True
        if name in torch_facts.STATE_DICT_GETTERS:
            return any(
                arg.keyword is not None and arg.keyword.value == "options" and self._offloads(arg)
                for arg in value.args
            )
        if name == "state_dict" and isinstance(value.func, cst.Attribute):
            return self._state_dict_type_offloads(at)
        return False

    def _state_dict_type_offloads(self, at: cst.CSTNode) -> bool:
        """``at`` runs inside ``with FSDP.state_dict_type(..., <offloading config>)``, or the
        file sets such a type for good with ``set_state_dict_type``."""
        for node in self._scope_nodes:
            if (
                isinstance(node, cst.With)
                and any(self._sets_offloading_type(item.item) for item in node.items)
                and any(inner is at for inner in descendants(node.body))
            ):
                return True
        return any(
            isinstance(node, cst.Call)
            and last_name(node.func) == "set_state_dict_type"
            and self._sets_offloading_type(node)
            for node in descendants(self._module)
        )

    def _sets_offloading_type(self, node: cst.BaseExpression) -> bool:
        return (
            isinstance(node, cst.Call)
            and last_name(node.func) in torch_facts.STATE_DICT_TYPE_SETTERS
            and any(self._offloads(arg) for arg in node.args)
        )

    def _offloads(self, arg: cst.Arg) -> bool:
        """A config that offloads to the CPU, written here or named."""
        value = arg.value
        if isinstance(value, cst.Name):
            return value.value in self._offloading_configs()
        return _offloading_config(value)

    def _offloading_configs(self) -> set[str]:
        """Names the module or the scope binds to an offloading config."""
        if self._configs is None:
            statements = [*self._module.body, *self._scope_nodes]
            self._configs = {
                target.target.value
                for node in statements
                for assign in _assignments(node)
                if _offloading_config(assign.value)
                for target in assign.targets
                if isinstance(target.target, cst.Name)
            }
        return self._configs


def _assignments(node: cst.CSTNode) -> list[cst.Assign]:
    if isinstance(node, cst.Assign):
        return [node]
    if isinstance(node, cst.SimpleStatementLine):
        return [item for item in node.body if isinstance(item, cst.Assign)]
    return []


def _offloading_config(node: cst.BaseExpression) -> bool:
    """``FullStateDictConfig(offload_to_cpu=True)``, ``StateDictOptions(cpu_offload=True)``."""
    return isinstance(node, cst.Call) and any(
        arg.keyword is not None
        and arg.keyword.value in torch_facts.OFFLOAD_KEYWORDS
        and isinstance(arg.value, cst.Name)
        and arg.value.value == "True"
        for arg in node.args
    )
