"""devlint's parse: LibCST's tree without LibCST's per-node checks, which stay on for
every node made outside a parse."""

from __future__ import annotations

import contextlib

import libcst as cst
import pytest

from devlint.inputs.parsing import parse_module

SOURCE = "import torch\n\nx = torch.zeros(3, device='cuda')  # a comment\n"


def refuse(node: cst.CSTNode) -> None:
    raise AssertionError(f"{type(node).__name__} was checked")


def test_a_parse_skips_the_node_checks_and_gives_the_same_tree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected = cst.parse_module(SOURCE)
    monkeypatch.setattr(cst.Name, "_validate", refuse)
    with pytest.raises(AssertionError, match="Name was checked"):
        cst.parse_module(SOURCE)
    tree = parse_module(SOURCE)
    assert tree.deep_equals(expected) and tree.code == SOURCE


@pytest.mark.parametrize("source", [SOURCE, "def (:\n"])
def test_nodes_made_after_a_parse_are_checked_again(source: str) -> None:
    with contextlib.suppress(cst.ParserSyntaxError):  # a failed parse puts them back too
        parse_module(source)
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
