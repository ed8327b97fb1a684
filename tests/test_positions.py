"""Positions computed per statement equal LibCST's own, for every node of real files."""

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from devlint.core.positions import Positions

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*ROOT.glob("rules/*/*.py"), *ROOT.glob("fixtures/DVL1*/*.py")])[::3]

TRICKY = '''"""Module docstring."""
# a header comment

import torch  # trailing


@decorator
# between decorators
@other(1)
def f(x):
    a = 1; b = 2
    return x + a


class C:  # comment
    x = torch.zeros(3)
if True: y = torch.ones(2)
'''


def _check(source: str) -> None:
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(module, source)
    for node, where in expected.items():
        span = ((where.start.line, where.start.column), (where.end.line, where.end.column))
        assert positions.span(node) == span, (type(node).__name__, span)


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_per_statement_positions_equal_libcst(path):
    _check(path.read_text(encoding="utf-8"))


def test_decorators_comments_and_semicolons():
    _check(TRICKY)


def test_falls_back_without_source():
    module = cst.parse_module(TRICKY)
    node = module.body[-1]
    assert Positions(module, None).span(node)[0] == (17, 0)
