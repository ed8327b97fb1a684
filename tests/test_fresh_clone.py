"""A plain clone, after the README's two commands, runs the whole suite; a wheel built from
it works installed.

Nothing outside the repository is read, and nothing is skipped for a missing dependency.

The suite once read the SARIF schema from a folder beside the checkout and
skipped about 70 tests (emulator, harness, every rule example) when torch was
missing, which the README's install did not bring.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import requires
from pathlib import Path

import pytest
from packaging.requirements import Requirement

pytestmark = pytest.mark.slow  # runs torch programs or installs packages (docs/testing.md)

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


def test_an_installed_wheel_shows_each_rule_with_its_examples(tmp_path: Path) -> None:
    """``devlint rule`` from a wheel once showed the docstring alone, although the wheel
    carries every rule's examples (``rules/`` as ``devlint/_rules``). The wheel is built
    by its real backend and unpacked as an installer would, away from the checkout."""
    build = ["wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path / "wheel")]
    built = subprocess.run(
        [sys.executable, "-m", "pip", *build, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "wheel").glob("devlint-*.whl")
    site = tmp_path / "site-packages"
    zipfile.ZipFile(wheel).extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    environment = {**os.environ, "PYTHONPATH": str(site)}

    def devlint(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "devlint", *args],
            cwd=elsewhere,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )

    where = subprocess.run(
        [sys.executable, "-c", "import devlint; print(devlint.__file__)"],
        cwd=elsewhere,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(site)  # not the checkout
    page = devlint("rule", "DVL101")
    assert page.returncode == 0, page.stderr
    bad = (ROOT / "rules" / "DVL101-mixed-device-operands" / "bad.py").read_text(encoding="utf-8")
    checkout = (ROOT / "docs" / "rules" / "DVL101.md").read_text(encoding="utf-8")
    assert "## Example\n\n`rules/DVL101-mixed-device-operands/bad.py`:" in page.stdout
    assert bad.rstrip() in page.stdout
    assert "## Use instead" in page.stdout
    # the checkout's page but for the harness's evidence, which the page links to instead
    assert page.stdout.startswith(checkout[: checkout.index("## Evidence")])
    assert page.stdout.rstrip().endswith("/docs/rules/DVL101.md")
