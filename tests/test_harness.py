"""``devlint confirm`` and ``devlint run`` end to end on the emulated backend (needs torch)."""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from devlint.rules import all_rules

pytestmark = pytest.mark.slow  # runs torch programs or installs packages (docs/testing.md)

ROOT = Path(__file__).resolve().parent.parent


def devlint(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "devlint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def test_confirm_runs_a_crash_a_measured_symptom_and_a_forked_worker(tmp_path):
    evidence = tmp_path / "evidence.json"
    result = devlint(
        "confirm", "DVL101", "DVL204", "DVL303", "--backend", "emulated", "--json", str(evidence)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if line.startswith("DVL")]
    assert [(row[0], row[1], row[3]) for row in rows] == [
        (code, example, "pass")
        for code in ("DVL101", "DVL204", "DVL303")
        for example in ("bad.py", "good.py", "fixed.py")
    ]
    data = json.loads(evidence.read_text())
    observed = {(r["rule"], r["example"]): r["observed"] for r in data["results"]}
    assert observed["DVL101", "bad.py"].startswith("RuntimeError: Expected all tensors")
    assert observed["DVL204", "bad.py"].startswith("symptom: host-to-device copy")
    assert "Cannot re-initialize CUDA in forked subprocess" in observed["DVL303", "bad.py"]
    assert data["backends"] == {"emulated": {"gpus": 2}} and data["fidelity"] is None


def test_confirm_from_an_installed_devlint_counts_the_examples_as_user_code(tmp_path):
    """A wheel puts the examples in site-packages/devlint/_rules: DVL204's measured copies must
    still be the example's own lines, not hidden as devlint's or an installed package's."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    installed = Path(purelib) / "devlint"
    shutil.copytree(ROOT / "devlint", installed, ignore=shutil.ignore_patterns("__pycache__"))
    rule = next((ROOT / "rules").glob("DVL204-*"))
    shutil.copytree(rule, installed / "_rules" / rule.name)
    dependencies = [*site.getsitepackages(), site.getusersitepackages()]  # torch, LibCST
    (Path(purelib) / "dependencies.pth").write_text("\n".join(dependencies) + "\n")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [python, "-m", "devlint", "confirm", "DVL204", "--backend", "emulated"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    bad = next(line.split(maxsplit=5) for line in result.stdout.splitlines() if "bad.py" in line)
    assert bad[3] == "pass" and bad[5].startswith("symptom: host-to-device copy")


def test_confirm_skips_rules_that_need_more_gpus_than_emulated():
    result = devlint("confirm", "DVL401", "--backend", "emulated", "--gpus", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("needs 2 GPUs, the emulated backend has 1") == 3


def test_an_example_that_fails_otherwise_than_declared_fails():
    from devlint.harness.confirm import confirm, failed
    from devlint.harness.verdict import Outcome
    from devlint.rule import RuntimeExpectation
    from devlint.rules import rule_by_code

    rule = rule_by_code("DVL202")
    wrong = RuntimeExpectation(exception="RuntimeError", message="not what happens")
    misdeclared = type("Misdeclared", (rule,), {"meta": replace(rule.meta, runtime=wrong)})
    bad, good, fixed = confirm([misdeclared], "emulated", 2, parallel=2, timeout=120)
    assert bad.outcome is Outcome.FAIL and bad.observed.startswith("TypeError: can't convert")
    assert (good.outcome, fixed.outcome) == (Outcome.PASS, Outcome.PASS)
    assert failed([bad, good, fixed]) == [bad]


def test_confirm_refuses_the_fidelity_check_without_a_gpu():
    result = devlint("confirm", "DVL101", "--backend", "both")
    assert result.returncode == 2
    assert "needs a GPU" in result.stderr


def test_every_rule_is_confirmed_on_emulated_gpus():
    result = devlint("confirm", "--backend", "emulated")
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]
    confirmed = {line.split()[0] for line in result.stdout.splitlines() if line.startswith("DVL")}
    assert confirmed == {rule.meta.code for rule in all_rules()}


def test_run_reports_the_first_device_error_and_the_transfers_by_line(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            """\
            import sys
            import torch

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model = torch.nn.Linear(4, 2).to(device)
            batch = torch.randn(8, 4)
            print("epochs", sys.argv[1:])
            logits = model(batch)
            """
        )
    )
    result = devlint("run", "--gpus", "1", str(script), "--epochs", "1", cwd=tmp_path)
    assert result.returncode == 1
    assert "epochs ['--epochs', '1']" in result.stdout
    assert "first device error: train.py:8: RuntimeError: Expected all tensors" in result.stderr
    assert re.search(r"train.py:5 +2 \(40 B\)", result.stderr)  # the Linear's weight and bias
    assert 'File "' in result.stderr and 'train.py", line 8' in result.stderr


ARGV_SCRIPT = """\
import sys
import torch

print("argv", sys.argv[1:], "gpus", torch.cuda.device_count())
"""


@pytest.mark.parametrize(
    ("command_line", "script_args", "gpus"),
    [
        (["--gpus", "1", "argv.py", "--", "--epochs", "1"], ["--epochs", "1"], 1),
        (["argv.py", "--", "--epochs", "1"], ["--epochs", "1"], 2),
        (["--gpus", "1", "argv.py", "--epochs", "1", "--", "x"], ["--epochs", "1", "--", "x"], 1),
        (["--gpus=3", "--", "argv.py", "--help"], ["--help"], 3),
        (["argv.py", "--", "--gpus", "1", "--", "x"], ["--gpus", "1", "--", "x"], 2),
    ],
)
def test_run_takes_devlints_options_before_the_script_and_the_rest_for_the_script(
    tmp_path, command_line, script_args, gpus
):
    (tmp_path / "argv.py").write_text(ARGV_SCRIPT)
    result = devlint("run", *command_line, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"argv {script_args!r} gpus {gpus}" in result.stdout
    said = {1: "1 emulated GPU", 2: "2 emulated GPUs", 3: "3 emulated GPUs"}[gpus]
    assert f"devlint run: exit status 0, {said}\n" in result.stderr


def test_run_refuses_its_own_options_right_after_the_script_as_ambiguous(tmp_path):
    (tmp_path / "argv.py").write_text(ARGV_SCRIPT)
    result = devlint("run", "argv.py", "--gpus", "1", "--", "--epochs", "1", cwd=tmp_path)
    assert result.returncode == 2 and "argv" not in result.stdout
    assert "--gpus 1 after the script is ambiguous" in result.stderr
    assert "(devlint run --gpus 1 argv.py -- --epochs 1)" in result.stderr
    assert "(devlint run argv.py -- --gpus 1 -- --epochs 1)" in result.stderr


def test_run_without_a_script_is_a_usage_error():
    result = devlint("run", "--gpus", "1")
    assert result.returncode == 2
    assert "the script to run is missing" in result.stderr


def test_run_help_shows_the_order_it_accepts():
    result = devlint("run", "--help")
    assert result.returncode == 0
    assert "usage: devlint run [-h] [--gpus N] [--json PATH] SCRIPT [--] [ARGS ...]" in (
        result.stdout
    )
    assert "devlint's options go before SCRIPT" in " ".join(result.stdout.split())
