"""``torch.distributions``: a distribution holds the tensors it was built from, and its
samples, log-probabilities and statistics are computed with them, on their device.

``Normal(mean, std)`` does not check devices; ``dist.sample()`` and ``dist.log_prob(x)``
do, where the parameters (and ``x``) meet. So the meeting is recorded at those calls.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from devlint.core.events import Operand
from devlint.core.scopes import Args
from devlint.core.torch_facts import (
    DISTRIBUTION_ATTRIBUTES,
    DISTRIBUTION_METHODS_OF_A_VALUE,
    DISTRIBUTION_SAMPLERS,
    DISTRIBUTION_STATISTICS,
    DISTRIBUTION_WRAPPERS,
    DISTRIBUTIONS_PACKAGE,
    NOT_DISTRIBUTION_PARAMETERS,
)
from devlint.core.values import Kind, Referent, Value, is_tensor_like, join_all


@dataclass(frozen=True, eq=False)
class Parameters(Referent):
    """``ref`` of a distribution: the expressions its tensors were given as."""

    nodes: tuple[cst.BaseExpression, ...]


def is_distribution(qualname: str) -> bool:
    """``torch.distributions.Normal``, ``torch.distributions.normal.Normal`` …: a class."""
    return qualname.startswith(DISTRIBUTIONS_PACKAGE) and qualname.rsplit(".", 1)[1][:1].isupper()


def construct(qualname: str, args: Args) -> Value:
    """The distribution ``qualname(args)`` builds: its tensor parameters, kept with their
    expressions; a wrapper (``Independent(base, 1)``) holds its base's."""
    if qualname.rsplit(".", 1)[1] in DISTRIBUTION_WRAPPERS:
        base = args.get(0, "base_distribution")
        if base is not None and base[1].kind is Kind.DISTRIBUTION:
            return base[1]
    given = [
        (node, value)
        for keyword, (node, value) in _named(args)
        if keyword not in NOT_DISTRIBUTION_PARAMETERS and is_tensor_like(value)
    ]
    values = tuple(value for _, value in given)
    device = join_all(list(values)) if values else Value(Kind.UNKNOWN)
    return Value(
        Kind.DISTRIBUTION,
        device.device,
        device.origin,
        items=values,
        ref=Parameters(tuple(node for node, _ in given)),
    )


def operands(distribution: Value, name: str, args: Args) -> list[Operand]:
    """The tensors that meet when ``distribution.name(args)`` runs."""
    known = isinstance(distribution.ref, Parameters) and distribution.items is not None
    if name not in DISTRIBUTION_SAMPLERS | DISTRIBUTION_METHODS_OF_A_VALUE or not known:
        return []
    met = [
        Operand(node, value)
        for node, value in zip(distribution.ref.nodes, distribution.items, strict=True)
    ]
    if name in DISTRIBUTION_METHODS_OF_A_VALUE:
        given = args.get(0, "value")
        if given is not None:
            met.insert(0, Operand(*given))
    return met


def result(distribution: Value, name: str) -> Value | None:
    """What a method or attribute of a distribution gives: a tensor where its parameters are
    (None: not one the analysis knows)."""
    methods = DISTRIBUTION_SAMPLERS | DISTRIBUTION_METHODS_OF_A_VALUE | DISTRIBUTION_STATISTICS
    if name in methods or name in DISTRIBUTION_ATTRIBUTES:
        return Value(Kind.TENSOR, distribution.device, distribution.origin)
    return None


def _named(args: Args) -> list[tuple[str | None, tuple[cst.BaseExpression, Value]]]:
    return [(None, given) for given in args.positional] + list(args.keywords.items())
