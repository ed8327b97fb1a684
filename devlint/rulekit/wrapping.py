"""Questions rules ask about data-parallel wrappers (read-only helpers over Facts)."""

from __future__ import annotations

import libcst as cst

from devlint.core.scopes import WrapperInfo
from devlint.core.syntax import is_rank_name, words_in
from devlint.core.values import WRAPPED_STATE, Origin, Value, parts
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
    tagged = (part.origin for part in parts(value) if part.origin is not None)
    return next((origin for origin in tagged if origin.tag == WRAPPED_STATE), None)


def mentions_rank(node: cst.CSTNode | None) -> bool:
    """``local_rank``, ``args.gpu``, ``f"cuda:{rank}"``: an expression naming a process's GPU."""
    return node is not None and any(
        is_rank_name(word) for word, is_string in words_in(node) if not is_string
    )
