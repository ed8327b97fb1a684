"""The harness's protocol and plumbing, without torch: verdicts, evidence, timeouts, imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from devlint.harness import evidence
from devlint.harness.confirm import Evidence
from devlint.harness.observe import CREATED_THEN_MOVED, HOST_TO_DEVICE
from devlint.harness.report import ProcessReport, RunReport, combine
from devlint.harness.runner import Job, Result, run_jobs
from devlint.harness.summary import run_summary
from devlint.harness.verdict import Outcome, expected, judge
from devlint.harness.words import counted
from devlint.rule import RuntimeExpectation

pytestmark = pytest.mark.slow  # runs torch programs or installs packages (docs/testing.md)

ROOT = Path(__file__).resolve().parent.parent
CRASH = RuntimeExpectation(exception="RuntimeError", message="on the same device")
SILENT = RuntimeExpectation(symptom="was never moved to the device")
ADVICE = RuntimeExpectation(symptom="none: a recommendation, bad.py runs")


def result(
    status: int = 0,
    exception: tuple[str, str] | None = None,
    stdout: str = "",
    symptoms: tuple[str, ...] = (),
    timed_out: bool = False,
) -> Result:
    report = RunReport(
        exception={"type": exception[0], "message": exception[1]} if exception else None,
        device_errors=[],
        transfers=[],
        symptoms=list(symptoms),
    )
    return Result(Job(Path("x.py"), "emulated", 2), status, timed_out, 0.5, stdout, "", report)


def test_bad_passes_with_the_declared_exception_and_fragment():
    found = result(1, ("RuntimeError", "Expected all tensors to be on the same device, but ..."))
    assert judge(CRASH, "bad.py", found).outcome is Outcome.PASS
    assert judge(CRASH, "bad.py", found).observed.startswith("RuntimeError: Expected all")


def test_bad_fails_with_another_exception_or_message_or_a_clean_exit():
    other_type = result(1, ("TypeError", "on the same device"))
    other_message = result(1, ("RuntimeError", "CUDA out of memory"))
    for found in (other_type, other_message, result(0)):
        assert judge(CRASH, "bad.py", found).outcome is Outcome.FAIL


def test_a_fragment_deeper_in_a_worker_error_is_found_and_shown():
    message = (
        "Caught RuntimeError in DataLoader worker process 0.\nRuntimeError: on the same device"
    )
    verdict = judge(CRASH, "bad.py", result(1, ("RuntimeError", message)))
    assert verdict.outcome is Outcome.PASS
    assert verdict.observed.endswith("… RuntimeError: on the same device")


def test_a_symptom_is_shown_by_an_assertion_a_printed_line_or_a_measurement():
    by_assert = result(1, ("AssertionError", "the corpus was never moved to the device"))
    printed = result(0, stdout="DEVLINT-SYMPTOM: the model Was Never Moved To The Device\n")
    measured = result(0, symptoms=("the tensor was never moved to the device: 3 times",))
    for shown in (by_assert, printed, measured):
        assert judge(SILENT, "bad.py", shown).outcome is Outcome.PASS
    unrelated = result(1, ("AssertionError", "loss did not decrease"))
    assert judge(SILENT, "bad.py", unrelated).outcome is Outcome.FAIL


def test_good_and_fixed_must_exit_0_without_the_symptom():
    assert judge(SILENT, "fixed.py", result(0)).outcome is Outcome.PASS
    assert judge(CRASH, "good.py", result(1, ("RuntimeError", "boom"))).outcome is Outcome.FAIL
    showing = result(0, symptoms=("it was never moved to the device",))
    assert judge(SILENT, "good.py", showing).outcome is Outcome.FAIL


def test_a_recommendation_expects_bad_to_run_and_a_timeout_always_fails():
    assert judge(ADVICE, "bad.py", result(0)).outcome is Outcome.PASS
    assert expected(ADVICE, "bad.py") == "exit 0 (a recommendation)"
    assert judge(CRASH, "good.py", result(timed_out=True)).outcome is Outcome.TIMEOUT


def test_the_evidence_file_merges_runs_and_renders_each_rules_section(tmp_path):
    path = tmp_path / "evidence.json"
    first = Evidence("DVL101", "bad.py", "emulated", 2, Outcome.PASS, "e", "RuntimeError: a|b", 1.0)
    other = Evidence("DVL102", "bad.py", "emulated", 2, Outcome.PASS, "e", "exit 1", 1.0)
    evidence.write(path, [first, other])
    evidence.write(path, [Evidence("DVL101", "bad.py", "emulated", 2, Outcome.FAIL, "e", "x", 2.0)])
    data = evidence.load(path)
    assert [(r["rule"], r["outcome"]) for r in data["results"]] == [
        ("DVL101", "fail"),
        ("DVL102", "pass"),
    ]
    evidence.write(path, [first])
    section = "\n".join(evidence.rule_section("DVL101", evidence.load(path)))
    assert "| `bad.py` | emulated (2 GPUs) | pass | `RuntimeError: a\\|b` |" in section
    assert evidence.FIDELITY_NOT_RUN in section
    assert "No harness evidence" in "\n".join(evidence.rule_section("DVL999", data))


def test_each_rules_section_says_what_real_cuda_confirmed(tmp_path):
    path = tmp_path / "evidence.json"
    evidence.write(
        path,
        [
            Evidence("DVL101", "bad.py", "emulated", 2, Outcome.PASS, "e", "x", 1.0),
            Evidence("DVL101", "bad.py", "cuda", 1, Outcome.PASS, "e", "x", 1.0),
            Evidence("DVL101", "good.py", "emulated", 2, Outcome.PASS, "e", "x", 1.0),
            Evidence("DVL101", "good.py", "cuda", 1, Outcome.FAIL, "e", "x", 1.0),
            Evidence("DVL102", "bad.py", "emulated", 2, Outcome.PASS, "e", "x", 1.0),
            Evidence("DVL102", "bad.py", "cuda", 1, Outcome.PASS, "e", "x", 1.0),
            Evidence("DVL401", "bad.py", "emulated", 2, Outcome.PASS, "e", "x", 1.0),
            Evidence("DVL401", "bad.py", "cuda", 1, Outcome.SKIP, "e", "needs 2 GPUs", 0.0),
        ],
    )
    data = evidence.load(path)

    def last_line(code):
        return evidence.rule_section(code, data)[-2]

    assert last_line("DVL101") == "Real CUDA and the emulator differ on `good.py`"
    assert last_line("DVL102") == "Real CUDA and the emulator agree on every example run on both."
    assert last_line("DVL401").startswith("Not confirmed on real CUDA: the fidelity check ran")
    assert "with 1 GPU," in last_line("DVL401")


def test_the_evidence_of_one_gpu_says_gpu(tmp_path):
    path = tmp_path / "evidence.json"
    evidence.write(path, [Evidence("DVL101", "bad.py", "emulated", 1, Outcome.PASS, "e", "x", 1.0)])
    section = "\n".join(evidence.rule_section("DVL101", evidence.load(path)))
    assert "| `bad.py` | emulated (1 GPU) | pass |" in section


def test_the_processes_of_a_run_make_one_table_and_one_symptom():
    """A worker's transfers and copies at the line the main process also ran add up."""

    def process(pid: int, main: bool, copies: int) -> ProcessReport:
        moved = {"file": "/x/train.py", "line": 5, "count": copies, "bytes": 16 * copies}
        transfer = {"kind": HOST_TO_DEVICE, **moved}
        return ProcessReport(pid, main, transfers=[transfer], created_then_moved=[moved])

    run = combine([process(10, True, 1), process(11, False, 2)])
    assert run.transfers == [
        {"kind": HOST_TO_DEVICE, "file": "/x/train.py", "line": 5, "count": 3, "bytes": 48}
    ]
    assert run.symptoms == [f"{CREATED_THEN_MOVED}: 3 copies at train.py:5"]
    assert combine([process(10, True, 1)]).symptoms == [
        f"{CREATED_THEN_MOVED}: 1 copy at train.py:5"
    ]


def test_counts_are_worded_in_the_singular_for_one():
    assert [counted(n, "example") for n in (0, 1, 2)] == ["0 examples", "1 example", "2 examples"]
    assert counted(1, "copy", "copies") == "1 copy" and counted(3, "copy", "copies") == "3 copies"


def test_the_run_summary_counts_gpus_in_words():
    nothing = RunReport(exception=None, device_errors=[], transfers=[], symptoms=[])
    assert (
        run_summary(nothing, 1, 0).splitlines()[1] == "devlint run: exit status 0, 1 emulated GPU"
    )
    assert (
        run_summary(nothing, 2, 0).splitlines()[1] == "devlint run: exit status 0, 2 emulated GPUs"
    )


def test_the_committed_evidence_names_existing_rules_and_examples():
    from devlint.rules import rule_by_code

    data = json.loads((ROOT / "docs" / "evidence.json").read_text(encoding="utf-8"))
    for item in data["results"]:
        assert rule_by_code(item["rule"]) is not None, item["rule"]
        assert item["example"] in ("bad.py", "good.py", "fixed.py")
        assert item["outcome"] in {outcome.value for outcome in Outcome}


def test_a_hanging_example_is_killed_with_everything_it_started(tmp_path):
    marker = tmp_path / "child.pid"
    script = tmp_path / "hang.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import subprocess, sys, time
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
            open({str(marker)!r}, "w").write(str(child.pid))
            time.sleep(600)
            """
        )
    )
    (found,) = run_jobs([Job(script, "none", 0)], parallel=1, timeout=3)
    assert found.timed_out  # not a script that ended after its 600 s
    child = int(marker.read_text())
    time.sleep(0.5)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_jobs_run_like_python_script_with_arguments_and_exit_status(tmp_path):
    script = tmp_path / "args.py"
    script.write_text("import sys\nprint(sys.argv[1:], __name__)\nsys.exit(3)\n")
    (found,) = run_jobs([Job(script, "none", 0, args=("--epochs", "1"))], 1, 60)
    assert found.exit_status == 3
    assert found.stdout.strip() == "['--epochs', '1'] __main__"


def test_linting_and_the_harness_commands_do_not_import_torch():
    code = (
        "import sys\n"
        "import devlint.frontends.cli, devlint.harness.cli, devlint.harness.confirm\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT)


def test_devlint_check_does_not_import_the_harness():
    """Every pre-commit run pays devlint's start-up: the harness loads for its own commands only."""
    code = (
        "import sys\n"
        "from devlint.frontends.cli import main\n"
        "assert main(['check', '--no-cache', 'rules/DVL101-mixed-device-operands/bad.py']) == 1\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('devlint.harness.'))\n"
        "assert loaded == ['devlint.harness.commands', 'devlint.harness.run_options'], loaded\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
