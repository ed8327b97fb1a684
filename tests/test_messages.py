"""Messages read as sentences: no word doubled where two pieces of text meet."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from devlint.config import Settings
from devlint.running.engine import lint_source

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*ROOT.glob("rules/*/bad.py"), *ROOT.glob("fixtures/*/*.py")])
DOUBLED = re.compile(r"\b(\w+) \1\b")

MODULE_INPUT = """\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        h = torch.zeros(3)
        return x + h
"""


def test_module_input_origin_is_said_once() -> None:
    (finding,) = lint_source(MODULE_INPUT, "net.py", Settings())
    assert finding.code == "DVL103"
    assert "`x` is on the module's device (an input of the module at line 6)" in finding.message


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_no_message_doubles_a_word(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    settings = Settings(extend_select=("DVL",))
    doubled = [
        f"{d.line}: {d.message}"
        for d in lint_source(source, str(path), settings)
        if DOUBLED.search(d.message.replace(d.path, ""))
    ]
    assert doubled == []
