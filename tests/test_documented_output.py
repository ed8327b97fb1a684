"""The output the docs show for the bundled examples is what devlint prints for them.

README.md's headline example once showed a column and a severity devlint did not print.
Every ``console`` block of README.md, and the blocks of docs/usage.md that run on the
bundled ``rules/`` examples, are run and compared line for line (stdout, then stderr,
as a terminal shows them).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_CONSOLE = re.compile(r"^```console\n(.*?)^```", re.S | re.M)


def console_blocks(document: Path) -> list[tuple[str, list[str]]]:
    """(command, the lines shown after it) of each ``console`` block's one command."""
    blocks = []
    for body in _CONSOLE.findall(document.read_text(encoding="utf-8")):
        command, *shown = body.splitlines()
        assert command.startswith("$ "), body
        blocks.append((command[2:], shown))
    return blocks


def runs_on_bundled_examples(command: str) -> bool:
    return any(word.startswith("rules/") for word in shlex.split(command))


DOCUMENTED = [
    *console_blocks(ROOT / "README.md"),
    *(
        block
        for block in console_blocks(ROOT / "docs" / "usage.md")
        if runs_on_bundled_examples(block[0])
    ),
]


def test_the_readme_and_the_usage_docs_show_bundled_examples() -> None:
    """The parametrised test below must not run on nothing."""
    assert [command for command, _ in DOCUMENTED] == [
        "devlint check rules/DVL301-loader-batch-not-moved/bad.py",
        "devlint check --show-source rules/DVL301-loader-batch-not-moved/bad.py",
    ]


@pytest.mark.parametrize(("command", "shown"), DOCUMENTED, ids=[c for c, _ in DOCUMENTED])
def test_documented_output_is_what_devlint_prints(
    command: str, shown: list[str], tmp_path: Path
) -> None:
    program, *args = shlex.split(command)
    assert program == "devlint"
    environment = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR",)}
    result = subprocess.run(
        [sys.executable, "-m", "devlint", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**environment, "NO_COLOR": "1", "DEVLINT_CACHE_DIR": str(tmp_path)},
    )
    assert result.stdout.splitlines() + result.stderr.splitlines() == shown
