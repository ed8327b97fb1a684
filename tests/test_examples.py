"""The rule examples and fixtures are the specification: each file reports exactly its markers.

`rules/<CODE>-<name>/{bad,good,fixed}.py` are runnable programs and `fixtures/<CODE>/*.py` static
edge cases. In their comments, `# expect: DVL101` marks a line that must be reported (with
`DVL101@COL`, also at that 1-based column) and `# todo-expect: DVL101` a known miss that must not
be reported yet, so that the marker is turned into `# expect:` when the analysis learns the case.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from expectations import Expectation, parse_expectations

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
FIXTURES = ROOT / "fixtures"
EXAMPLE_NAMES = ("bad.py", "good.py", "fixed.py")
RULE_FOLDER = re.compile(r"(?P<code>[A-Z]+[0-9]+)-[a-z0-9]+(?:-[a-z0-9]+)*")


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _rule_folders() -> list[Path]:
    if not RULES.is_dir():
        return []
    return sorted(
        path for path in RULES.iterdir() if path.is_dir() and not path.name.startswith((".", "_"))
    )


RULE_FOLDERS = _rule_folders()
EXAMPLES = [
    folder / name for folder in RULE_FOLDERS for name in EXAMPLE_NAMES if (folder / name).is_file()
]
CLEAN_EXAMPLES = [path for path in EXAMPLES if path.name != "bad.py"]
FIXTURE_FILES = sorted(FIXTURES.glob("*/*.py"))


def _own_code(path: Path) -> str:
    """The rule a file illustrates: its folder is `rules/<CODE>-<name>` or `fixtures/<CODE>`."""
    return path.parent.name.split("-", 1)[0]


def _lint(path: Path, source: str):
    """Lint with the default rules plus the file's own rule (which may be off by default)."""
    from devlint.config import Settings  # imported here: the runnable checks need no analysis
    from devlint.running.engine import lint_source

    return lint_source(source, _relative(path), Settings(extend_select=(_own_code(path),)))


def _describe(pairs, diagnostics) -> str:
    messages = {(d.line, d.code): d.message for d in diagnostics}
    return ", ".join(
        f"line {line} {code}" + (f" ({messages[line, code]})" if (line, code) in messages else "")
        for line, code in sorted(pairs)
    )


def _assert_reports_match_markers(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    expectations = parse_expectations(source)
    diagnostics = _lint(path, source)
    reported = {(d.line, d.code) for d in diagnostics}
    expected = {(e.line, e.code) for e in expectations if not e.todo}
    known_misses = {(e.line, e.code) for e in expectations if e.todo}

    now_found = reported & known_misses
    assert not now_found, (
        f"{_relative(path)}: now reported, turn `# todo-expect:` into `# expect:`: "
        + _describe(now_found, diagnostics)
    )
    assert reported == expected, (
        f"{_relative(path)}: missing: {_describe(expected - reported, diagnostics) or 'none'}; "
        f"unexpected: {_describe(reported - expected, diagnostics) or 'none'}"
    )
    for expectation in expectations:
        if expectation.column is None or expectation.todo:
            continue
        columns = sorted(
            d.column + 1
            for d in diagnostics
            if (d.line, d.code) == (expectation.line, expectation.code)
        )
        assert expectation.column in columns, (
            f"{_relative(path)}:{expectation.line}: {expectation.code} expected at column "
            f"{expectation.column}, reported at {columns}"
        )


@pytest.mark.parametrize("path", EXAMPLES, ids=_relative)
def test_example_reports_exactly_its_markers(path: Path) -> None:
    _assert_reports_match_markers(path)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=_relative)
def test_fixture_reports_exactly_its_markers(path: Path) -> None:
    _assert_reports_match_markers(path)


@pytest.mark.parametrize("path", CLEAN_EXAMPLES, ids=_relative)
def test_good_and_fixed_examples_report_nothing(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert parse_expectations(source) == [], f"{_relative(path)} must carry no markers"
    assert _lint(path, source) == []


@pytest.mark.parametrize("folder", RULE_FOLDERS, ids=lambda folder: folder.name)
def test_rule_folder_has_bad_good_and_fixed_examples(folder: Path) -> None:
    assert RULE_FOLDER.fullmatch(folder.name), f"rules/{folder.name} is not named <CODE>-<name>"
    missing = [name for name in EXAMPLE_NAMES if not (folder / name).is_file()]
    assert not missing, f"rules/{folder.name} lacks {', '.join(missing)}"
    markers = parse_expectations((folder / "bad.py").read_text(encoding="utf-8"))
    codes = {marker.code for marker in markers if not marker.todo}
    code = RULE_FOLDER.fullmatch(folder.name)["code"]
    assert code in codes, f"rules/{folder.name}/bad.py has no `# expect: {code}` line"


@pytest.mark.parametrize("path", EXAMPLES + FIXTURE_FILES, ids=_relative)
def test_file_starts_with_a_docstring(path: Path) -> None:
    assert ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))), _relative(path)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=_relative)
def test_fixture_docstring_says_whether_it_is_reported(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    docstring = ast.get_docstring(ast.parse(source)) or ""
    verdict = "Reported" if parse_expectations(source) else "Silent"
    assert docstring.startswith(verdict), f"{_relative(path)}: docstring should start {verdict!r}"


SILENT_FIXTURES = [
    path
    for path in FIXTURE_FILES
    if (ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").startswith("Silent")
]
TWIN = re.compile(r"its\s+twin,\s+([\w./]+\.py),\s+is\s+reported")
NO_TWIN_YET = {
    # Undoing the reason joins a cpu path and a device path to "unknown" (no facts per path):
    "DVL101/cpu_path_ends_in_raise.py": "paths",
    "DVL101/fallback_built_on_same_device.py": "paths",
    "DVL101/moved_on_every_branch.py": "paths",
    "DVL301/batch_moved_on_every_path.py": "paths",
    # Undoing the reason is another rule's finding, or a rewrite, not a one-thing change:
    "DVL102/unweighted_loss_with_cuda_inputs.py": "DVL106 reports the weighted loss",
    "DVL102/weighted_loss_moved_as_module.py": "DVL106 reports the unmoved criterion",
    "DVL405/metrics_on_cpu.py": "DVL101 reports the metrics without .cpu()",
    "DVL104/plain_list_of_sizes.py": "a list of modules needs another forward",
    "DVL204/built_on_cpu_then_moved.py": "DVL204 sees one-expression moves only",
    # The reason is not what the analysis keys on (the twin is silent too):
    "DVL103/confusion_matrix_on_cpu.py": "the predictions reach it only through .tolist()",
    "DVL103/cpu_only_schedule_in_init.py": "the schedule meets the data only by indexing",
    "DVL103/ranking_metric_after_cpu.py": "without .cpu() the relevance is of unknown device",
    "DVL103/weight_new_zeros_hidden.py": "a module-level CPU state into the GRU is unseen",
    "DVL201/compiled_module_moved_in_place.py": "torch.compile's result is of unknown kind",
    "DVL201/user_class_to_moves_in_place.py": "no bare .to() of a user class is judged",
    "DVL302/pin_memory_when_cuda_available.py": "pin_memory=is_available() is not read",
    "DVL402/load_into_inner_module.py": "a bare checkpoint loaded into a wrapper is unseen",
    "DVL405/ddp_labels_to_local_rank.py": "where DDP outputs land is not modelled",
    "DVL406/device_object_in_device_ids.py": "device_ids of torch.device objects are not read",
    # A reported twin could not run where the tests run:
    "DVL201/dataparallel_wrapper_moved_in_place.py": "the only reported variant's fix raises",
    "DVL301/lightning_training_step.py": "lightning is not installed for the tests",
}
"""Silent fixtures without a reported twin, and why: each is a known limit of the analysis
(or of the test machine), kept visible here as ``# todo-expect`` keeps known misses."""


def test_every_fixture_without_a_twin_is_a_silent_fixture() -> None:
    silent = {path.relative_to(FIXTURES).as_posix() for path in SILENT_FIXTURES}
    assert sorted(set(NO_TWIN_YET) - silent) == []


@pytest.mark.parametrize("path", SILENT_FIXTURES, ids=_relative)
def test_every_silent_fixture_names_its_reported_twin(path: Path) -> None:
    """A silent fixture documents one reason the code is correct; its twin is the same code
    without that reason, reported, so the fixture cannot be silent for another reason."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    named = TWIN.search(docstring)
    if path.relative_to(FIXTURES).as_posix() in NO_TWIN_YET:
        assert not named, f"{_relative(path)} has a twin now: remove it from NO_TWIN_YET"
        return
    assert named, f"{_relative(path)}: end the docstring with '(its twin, NAME.py, is reported)'"
    twin = path.parent / named.group(1)
    assert twin.is_file(), f"{_relative(path)}: its twin {named.group(1)} does not exist"
    assert parse_expectations(twin.read_text(encoding="utf-8")), f"{_relative(twin)} is silent"


@pytest.mark.parametrize("path", EXAMPLES, ids=_relative)
@pytest.mark.slow  # a torch program each (docs/testing.md)
def test_example_runs_on_cpu(path: Path, tmp_path: Path) -> None:
    environment = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # examples then pick the CPU
    completed = subprocess.run(
        [sys.executable, str(path)],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, f"{_relative(path)} failed on CPU:\n{completed.stderr}"


def test_markers_are_read_from_comments_only() -> None:
    source = 'text = "# expect: DVL101"\nx = 1  # expect: DVL101\n'
    assert parse_expectations(source) == [Expectation(2, "DVL101")]


def test_markers_carry_columns_known_misses_and_several_codes() -> None:
    source = (
        "a = 1  # expect: DVL101@5\nb = 2  # todo-expect: DVL301\nc = 3  # expect: DVL101, DVL102\n"
    )
    assert parse_expectations(source) == [
        Expectation(1, "DVL101", column=5),
        Expectation(2, "DVL301", todo=True),
        Expectation(3, "DVL101"),
        Expectation(3, "DVL102"),
    ]


def test_a_project_files_markers_say_what_it_reports_alone() -> None:
    source = "a = 1  # alone-expect: DVL103\nb = 2  # expect: DVL103  # alone-expect: DVL103\n"
    assert parse_expectations(source) == [
        Expectation(1, "DVL103", alone=True),
        Expectation(2, "DVL103"),
        Expectation(2, "DVL103", alone=True),
    ]


def test_malformed_marker_is_an_error() -> None:
    with pytest.raises(ValueError, match="malformed"):
        parse_expectations("x = 1  # expect: dvl101\n")
