"""A plain clone, after the README's two commands, runs the whole suite.

Nothing outside the repository is read, and nothing is skipped for a missing dependency.

The suite once read the SARIF schema from a folder beside the checkout and
skipped about 70 tests (emulator, harness, every rule example) when torch was
missing, which the README's install did not bring.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from importlib.metadata import requires
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def test_the_dev_extra_installs_a_pinned_torch() -> None:
    """``pip install -e ".[dev]"`` must bring torch, pinned (an unpinned one pulls a CUDA build)."""
    declared = [Requirement(entry) for entry in requires("devlint") or []]
    dev = [entry for entry in declared if entry.marker and entry.marker.evaluate({"extra": "dev"})]
    torch_requirements = [str(entry.specifier) for entry in dev if entry.name == "torch"]
    assert torch_requirements, dev
    assert all(pin.startswith("==") for pin in torch_requirements), torch_requirements
    assert importlib.util.find_spec("torch") is not None, "the dev extra was not installed"


def test_the_sarif_tests_pass_in_a_copy_with_nothing_beside_it(tmp_path: Path) -> None:
    """The tracked files alone, in a folder with no sibling, pass the SARIF tests."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    clone = tmp_path / "lonely" / "devlint"
    for name in filter(None, tracked.split("\0")):
        source = ROOT / name
        if source.is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_sarif.py"],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert " passed" in result.stdout and "skipped" not in result.stdout, result.stdout[-3000:]
