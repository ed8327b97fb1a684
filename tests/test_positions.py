"""devlint's cheap positions equal LibCST's PositionProvider on every node."""

import re
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
    positions = Positions(module)
    lines = re.split(r"\r\n|\r|\n", source)
    for node, where in expected.items():
        span = ((where.start.line, where.start.column), (where.end.line, where.end.column))
        assert positions.span(node) == span, (type(node).__name__, span)
        before = lines[where.start.line - 1][: where.start.column]
        assert positions.line_before(node) == before, (type(node).__name__, span)


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_positions_equal_libcst_on_examples_and_fixtures(path):
    _check(path.read_text(encoding="utf-8"))


def test_decorators_comments_and_semicolons():
    _check(TRICKY)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_every_kind_of_line_break(newline):
    _check(TRICKY.replace("\n", newline))


def test_no_trailing_newline_and_empty_module():
    _check(TRICKY.rstrip("\n"))
    _check("")
    _check("# only a comment")


def test_parenthesised_and_multiline_nodes():
    _check("x = (  # why\n    torch.zeros(\n        3,\n    )\n)\ny = a \\\n    + b\n")
