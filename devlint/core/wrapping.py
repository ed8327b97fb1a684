"""Questions rules ask about data-parallel wrappers (read-only helpers over Facts)."""

from __future__ import annotations

import libcst as cst

from devlint.core.scopes import WrapperInfo
from devlint.core.syntax import is_rank_name
from devlint.core.values import WRAPPED_STATE, Origin, Value
from devlint.diagnostic import Severity


def wrapper_info(value: Value) -> WrapperInfo | None:
    return value.ref if isinstance(value.ref, WrapperInfo) else None


def severity_for(info: WrapperInfo) -> Severity:
    """A model wrapped on some machines only fails on those: a warning."""
    return Severity.WARNING if info.conditional else Severity.ERROR


def only_when_wrapped(info: WrapperInfo) -> str:
    return (
        " (on machines with several GPUs, where the model is wrapped)" if info.conditional else ""
    )


def wrapped_state_in(value: Value) -> Origin | None:
    """Where a payload holds a ``state_dict()`` taken through a wrapper, if it does."""
    stack = [value]
    while stack:
        current = stack.pop()
        if current.origin is not None and current.origin.tag == WRAPPED_STATE:
            return current.origin
        stack.extend(current.items or ())
        if current.element is not None:
            stack.append(current.element)
    return None


def mentions_rank(node: cst.CSTNode | None) -> bool:
    """``local_rank``, ``args.gpu``, ``f"cuda:{rank}"``: an expression naming a process's GPU."""
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name) and is_rank_name(current.value):
            return True
        if isinstance(current, cst.Attribute) and is_rank_name(current.attr.value):
            return True
        stack.extend(current.children)
    return False
