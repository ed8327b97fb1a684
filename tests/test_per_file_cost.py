"""Front ends that lint one file at a time pay only for that file.

flake8 creates the plugin once per file and the language server re-lints a
buffer on every pause in typing: neither may redo per-process setup (rule
discovery, reading the torch API table) per file, and a file that never
mentions torch must cost no parse at all.
"""

from __future__ import annotations

import libcst
import pytest

from devlint.core import torch_api
from devlint.frontends.flake8_plugin import Plugin
from devlint.rules import all_rules
from devlint.running import engine

FILES = {
    f"m{index}.py": f'import torch\n\nx{index} = torch.ones({index})\nx{index}.to("cuda")\n'
    for index in range(5)
}


def run_plugin(name: str, source: str) -> list[str]:
    plugin = Plugin(tree=None, lines=source.splitlines(keepends=True), filename=name)
    return [message.split()[0] for _, _, message, _ in plugin.run()]


def test_setup_happens_once_per_process_not_per_file() -> None:
    run_plugin("warm.py", 'import torch\ntorch.ones(1).to("cuda")\n')  # loads everything once
    discovered = all_rules.cache_info().misses
    tables = torch_api._table.cache_info().misses
    for name, source in FILES.items():
        assert run_plugin(name, source) == ["DVL201"]
        engine.lint_source(source, name)
    assert all_rules.cache_info().misses == discovered
    assert torch_api._table.cache_info().misses == tables


def test_file_without_torch_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    def parse_module(source: str) -> None:
        raise AssertionError("parsed a file that never mentions torch")

    monkeypatch.setattr(libcst, "parse_module", parse_module)
    assert run_plugin("plain.py", "import numpy as np\n\nx = np.ones(3)\n" * 200) == []
