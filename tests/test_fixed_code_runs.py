"""The code devlint's fixes write must run: every fixable rule's `bad.py` and every fixture the
fixes change, fixed (unsafe fixes too) and run on two emulated GPUs (needs torch).

The `fixed.py` a person wrote is run by `devlint confirm` in test_harness.py; here it is the code
`--fix` writes. A fixed `bad.py` must pass as `fixed.py` does: exit 0 without the rule's symptom.
Fixtures are edge cases, not all whole programs: many only define functions or classes, and
running one executes its top level (imports, definitions, and whatever it runs there, often the
fixed lines themselves). A fixed fixture must exit 0, or stop where the test machine lacks what
it needs (CANNOT_RUN_HERE). All programs run in one batch on the harness's fork server.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from devlint.config import Settings
from devlint.harness.runner import Job, Result, run_jobs
from devlint.harness.verdict import Outcome, exception_of, judge
from devlint.rule import RuntimeExpectation
from devlint.rules import all_rules, rule_by_code
from devlint.running.fix import fix_source

pytestmark = pytest.mark.slow  # runs torch programs or installs packages (docs/testing.md)

ROOT = Path(__file__).resolve().parent.parent
FIXABLE = {rule.meta.code for rule in all_rules() if rule.meta.fixable}
BAD_EXAMPLES = sorted(
    path for path in (ROOT / "rules").glob("*/bad.py") if path.parent.name.split("-")[0] in FIXABLE
)
FIXTURES = sorted((ROOT / "fixtures").glob("*/*.py"))
CANNOT_RUN_HERE = {
    "DVL203/alias_import_torch_as_t.py": "FileNotFoundError",  # a checkpoint to load
    "DVL203/args_device_load_state_dict.py": "FileNotFoundError",
    "DVL203/ensemble_loop_over_checkpoints.py": "FileNotFoundError",
    "DVL203/from_torch_import_load.py": "FileNotFoundError",
    "DVL203/open_file_handle.py": "FileNotFoundError",
    "DVL203/resume_without_map_location.py": "FileNotFoundError",
    "DVL301/tqdm_loader.py": "ModuleNotFoundError",  # tqdm, when it is not installed
    "DVL401/ddp_alias_submodule.py": "KeyError",  # LOCAL_RANK, set by torchrun
    "DVL401/ddp_config_through_wrapper.py": "KeyError",
}
"""Fixtures that stop, fixed or not, at what a test machine lacks: (their exception type)."""


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _fixed(path: Path) -> str | None:
    """The file with every fix applied, or None when no fix changes it."""
    code = path.parent.name.split("-")[0]
    source = path.read_text(encoding="utf-8")
    result = fix_source(source, _name(path), Settings(extend_select=(code,)), unsafe=True)
    assert result.problem is None, result.problem
    return result.fixed if result.changed else None


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    """Each fixed program's run, by the name of the file it was fixed from."""
    folder = tmp_path_factory.mktemp("fixed")
    jobs = []
    for path in BAD_EXAMPLES + FIXTURES:
        fixed = _fixed(path)
        if fixed is None:
            continue
        script = folder / _name(path)
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(fixed, encoding="utf-8")
        jobs.append(Job(script, "emulated", 2, key=_name(path)))
    here = os.getcwd()
    os.chdir(folder)  # the programs' working folder: what they write stays in the test's folder
    try:
        results = run_jobs(jobs, parallel=os.cpu_count() or 1, timeout=300)
    finally:
        os.chdir(here)
    return {result.job.key: result for result in results}


@pytest.mark.parametrize("path", BAD_EXAMPLES, ids=_name)
def test_fixed_bad_example_runs_like_fixed_example(path: Path, runs: dict[str, Result]) -> None:
    result = runs[_name(path)]
    rule = rule_by_code(path.parent.name.split("-")[0])
    verdict = judge(rule.meta.runtime, "fixed.py", result)
    assert verdict.outcome is Outcome.PASS, f"{_name(path)} fixed: {verdict.observed}"


def test_every_fixed_fixture_runs(runs: dict[str, Result]) -> None:
    ran = [path for path in FIXTURES if _name(path) in runs]
    assert any(path.parent.name == "DVL204" for path in ran)  # the fixtures do have fixes
    failures = []
    for path in ran:
        result = runs[_name(path)]
        verdict = judge(RuntimeExpectation(), "fixed.py", result)  # exit 0, any symptom
        allowed = CANNOT_RUN_HERE.get(path.relative_to(ROOT / "fixtures").as_posix())
        if verdict.outcome is not Outcome.PASS and exception_of(result)[0] != allowed:
            failures.append(f"{_name(path)} fixed: {verdict.observed}\n{result.stderr[-1000:]}")
    assert not failures, "\n".join(failures)
