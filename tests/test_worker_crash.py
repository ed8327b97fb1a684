"""A worker process that dies (a segfault in LibCST's parser, the OOM killer) costs its file only.

The CLI's lint and fix functions are replaced by ``dying_lint.lint_or_die``
and ``dying_lint.fix_or_die``, which kill the process they run in on files
marked ``# die: …`` and lint or fix the others as usual. The CLI reads
``lint_file`` and ``fix_file`` in the main process and sends them to the
workers by name, so the replacements reach them whatever the start method.
With ``--jobs 2`` and 60 files the pool gets chunks of 7 files.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import dying_lint
import pytest
from snippets import DISCARDED, MIXED

from devlint.frontends import cli
from devlint.running import workers
from devlint.running.fix import fix_file

FILES = 60
CHUNK = 7  # FILES // (2 jobs * 4)
DIED = "DVL003 internal error: the worker process died while linting this file"


REAL_LINT_FILE = cli.lint_file
"""The CLI's own lint function, before a test replaces it with ``lint_or_die``."""


def make_project(root: Path, dying: dict[int, str]) -> list[str]:
    """m00.py … m59.py, alternately buggy in two ways; those in ``dying`` also get
    the marker that kills their worker. Returns the names of the others."""
    for index in range(FILES):
        source = MIXED if index % 2 else DISCARDED
        if index in dying:
            source += f"# die: {dying[index]}\n"
        (root / f"m{index:02}.py").write_text(source)
    return [f"m{index:02}.py" for index in range(FILES) if index not in dying]


def reports(output: str) -> dict[str, list[str]]:
    """File name → the ``CODE message`` texts reported for it (severity left out)."""
    found: dict[str, list[str]] = {}
    for line in output.splitlines():
        path, _, _, text = line.split(":", 3)
        code, _severity, message = text.strip().split(" ", 2)
        found.setdefault(Path(path).name, []).append(f"{code} {message}")
    return found


def normal_reports(
    root: Path, names: list[str], capsys: pytest.CaptureFixture[str]
) -> dict[str, list[str]]:
    """What the real linter, in this process, reports for ``names``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli, "lint_file", REAL_LINT_FILE)
        cli.main(["check", "--no-cache", "--jobs", "1", *(str(root / name) for name in names)])
    return reports(capsys.readouterr().out)


def attempts(log: Path, doing: str) -> dict[str, int]:
    """How many times each file was linted (``doing`` "lint") or fixed ("fix"): a run
    that reports fixes the files that have some, to count what ``--fix`` would apply."""
    counts: dict[str, int] = {}
    for line in log.read_text().splitlines():
        name, done = line.split()
        if done == doing:
            counts[name] = counts.get(name, 0) + 1
    return counts


@pytest.fixture
def dying(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Lint with ``lint_or_die``, fix with ``fix_or_die``; returns the log of the files
    they were called on."""
    log = tmp_path / "attempts.log"
    log.touch()
    monkeypatch.setenv(dying_lint.LOG_ENV, str(log))
    monkeypatch.setattr(cli, "lint_file", dying_lint.lint_or_die)
    monkeypatch.setattr(cli, "fix_file", dying_lint.fix_or_die)
    return log


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("SIGSEGV", "killed by SIGSEGV"),
        ("SIGKILL", "killed by SIGKILL"),
        ("exit 3", "exit status 3"),
    ],
)
def test_a_dying_worker_costs_only_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dying: Path, how: str, said: str
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    others = make_project(root, {3: how})  # in the middle of the first chunk
    expected = normal_reports(root, others, capsys)

    status = cli.main(["check", "--no-cache", "--jobs", "2", str(root)])

    captured = capsys.readouterr()
    found = reports(captured.out)
    assert found.pop("m03.py") == [f"{DIED} ({said})"]
    assert found == expected  # its chunk (m00 … m06), and all the others
    assert status == 1
    assert captured.err.startswith(f"Found {len(captured.out.splitlines())} problems in 60 files")
    assert "DVL003: 1," in captured.err
    # in its chunk, then alone, and not again; no file is linted more than twice
    counts = attempts(dying, "lint")
    assert counts["m03.py"] == 2
    assert set(counts) == {f"m{index:02}.py" for index in range(FILES)}
    assert max(counts.values()) <= 2


def test_several_dying_files_each_get_one_notice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dying: Path
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    dead = {1: "SIGSEGV", 5: "SIGKILL", 4 * CHUNK + 2: "SIGSEGV", FILES - 1: "exit 1"}
    others = make_project(root, dead)
    expected = normal_reports(root, others, capsys)

    assert cli.main(["check", "--no-cache", "--jobs", "2", "--exit-zero", str(root)]) == 0

    found = reports(capsys.readouterr().out)
    for index in dead:
        assert len(found.pop(f"m{index:02}.py")) == 1
    assert found == expected
    assert max(attempts(dying, "lint").values()) <= 2


def test_a_crash_is_not_cached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, dying: Path
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    make_project(root, {3: "SIGSEGV", 40: "SIGSEGV"})
    command = ["check", "--cache-dir", str(tmp_path / "cache"), "--jobs", "2", str(root)]
    cli.main(command)
    crashed = reports(capsys.readouterr().out)
    assert crashed["m03.py"] == crashed["m40.py"] == [f"{DIED} (killed by SIGSEGV)"]

    monkeypatch.undo()  # the real lint_file: the marked files are linted normally now
    cli.main(command)
    found = reports(capsys.readouterr().out)
    assert found["m03.py"] == found["m01.py"] != []  # the same source but for the marker
    assert found["m40.py"] == found["m00.py"] != []
    assert all(not r.startswith("DVL003") for rs in found.values() for r in rs)
    assert {name: rs for name, rs in found.items() if name not in ("m03.py", "m40.py")} == {
        name: rs for name, rs in crashed.items() if name not in ("m03.py", "m40.py")
    }


def test_when_workers_keep_dying_the_run_gives_up_in_bounded_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, dying: Path
) -> None:
    monkeypatch.setattr(workers, "MAX_WORKER_DEATHS", 4)
    root = tmp_path / "project"
    root.mkdir()
    dead = {index: "SIGKILL" for index in range(FILES) if index % 3 != 2}  # 40 of 60
    others = make_project(root, dead)
    expected = normal_reports(root, others, capsys)

    assert cli.main(["check", "--no-cache", "--jobs", "2", str(root)]) == 1

    found = reports(capsys.readouterr().out)
    given_up = "DVL003 internal error: not linted: "
    messages = [rs for name, rs in found.items() if int(name[1:3]) in dead]
    assert len(messages) == len(dead) and all(len(rs) == 1 for rs in messages)
    died = sum(rs[0].startswith(DIED) for rs in messages)
    assert 4 <= died <= 4 + 1  # the cap, and the other worker's file that was under way
    assert all(rs[0].startswith((DIED, given_up)) for rs in messages)
    assert any(rs[0].startswith(given_up) for rs in messages)
    assert f"{died} worker processes died or failed to start on other files" in next(
        rs[0] for rs in messages if rs[0].startswith(given_up)
    )
    for name in others:  # linted, or given up on before their turn came
        assert found[name] == expected[name] or (
            len(found[name]) == 1 and found[name][0].startswith(given_up)
        )
    assert max(attempts(dying, "lint").values()) <= 2


def test_a_dying_worker_costs_only_its_file_with_spawned_workers(tmp_path: Path) -> None:
    """The same with the spawn start method: nothing here relies on fork."""
    root = tmp_path / "project"
    root.mkdir()
    others = make_project(root, {10: "SIGSEGV"})
    program = (
        "import multiprocessing, sys; multiprocessing.set_start_method('spawn');"
        "import dying_lint; from devlint.frontends import cli;"
        "cli.lint_file = dying_lint.lint_or_die;"
        "sys.exit(cli.main(sys.argv[1:]))"
    )
    tests = str(Path(__file__).parent)
    path = os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, "-c", program, "check", "--no-cache", "--jobs", "2", "."],
        cwd=root,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1, result.stderr
    found = reports(result.stdout)
    assert found.pop("m10.py") == [f"{DIED} (killed by SIGSEGV)"]
    assert sorted(found) == others
    assert "Traceback" not in result.stderr


# --fix and --diff --------------------------------------------------------------------

DIED_FIXING = "internal error: the worker process died while fixing this file"


def fixed_in_process(
    copy: Path, option: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    """What the real fixer, in this process, does to ``copy``: status, stdout, stderr."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli, "fix_file", partial(fix_file, write=False))
        patch.chdir(copy)
        status = cli.main(["check", option, "--jobs", "1", "."])
    return status, *capsys.readouterr()


def file_bytes(root: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(root.glob("*.py"))}


def test_a_dying_worker_costs_only_its_file_when_fixing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, dying: Path
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    make_project(root, {4: "SIGSEGV"})  # m04: a safe fix (DVL201), mid first chunk
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    before = file_bytes(root)
    expected_status, expected_out, expected_err = fixed_in_process(copy, "--fix", capsys)

    monkeypatch.chdir(root)
    status = cli.main(["check", "--fix", "--jobs", "2", "."])

    captured = capsys.readouterr()
    assert status == expected_status == 1  # not 2: the run went on and reported
    found = reports(captured.out)
    assert found.pop("m04.py") == [f"DVL003 {DIED_FIXING} (killed by SIGSEGV)"]
    assert found == reports(expected_out)  # what is left in every other file
    after, fixed = file_bytes(root), file_bytes(copy)
    assert after.pop("m04.py") == before["m04.py"] != fixed.pop("m04.py")  # untouched
    assert after == fixed  # every other file fixed, as in one process
    assert f"m04.py: {DIED_FIXING} (killed by SIGSEGV)\n" in captured.err
    assert "DVL003: 1," in captured.err
    assert captured.err.count("died") == 1
    assert attempts(dying, "fix")["m04.py"] == 2  # in its chunk, then alone
    applied = int(re.search(r"Applied (\d+) fix", captured.err)[1])
    assert applied == int(re.search(r"Applied (\d+) fix", expected_err)[1]) - 1  # m04's


def test_a_dying_worker_costs_only_its_file_in_a_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, dying: Path
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    make_project(root, {4: "SIGKILL"})
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    before = file_bytes(root)
    expected_status, expected_out, expected_err = fixed_in_process(copy, "--diff", capsys)

    monkeypatch.chdir(root)
    status = cli.main(["check", "--diff", "--jobs", "2", "."])

    captured = capsys.readouterr()
    assert status == expected_status == 1
    parts = re.split(r"^(?=--- )", expected_out, flags=re.MULTILINE)
    killer = [part for part in parts if part.startswith("--- m04.py\n")]
    assert len(killer) == 1  # it has a fix: the run in one process shows it
    assert captured.out == expected_out.replace(killer[0], "")  # the others, in file order
    assert file_bytes(root) == before  # --diff writes nothing
    assert f"m04.py: {DIED_FIXING} (killed by SIGKILL)\n" in captured.err
    assert captured.err.count("died") == 1
    assert "Would apply 30 fixes." in expected_err
    assert "Would apply 29 fixes." in captured.err


def test_a_diff_that_lost_a_file_does_not_exit_as_if_nothing_were_to_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dying: Path
) -> None:
    for index in range(20):  # nothing safe to fix (DVL101 only)
        (tmp_path / f"m{index:02}.py").write_text(MIXED + ("# die: SIGSEGV\n" * (index == 4)))

    assert cli.main(["check", "--diff", "--jobs", "2", str(tmp_path)]) == 1

    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"m04.py: {DIED_FIXING} (killed by SIGSEGV)\n" in captured.err
    assert "Would apply 0 fixes." in captured.err


def test_a_worker_dying_while_the_fixes_are_counted_costs_only_its_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain run fixes the files that have fixes, not written, to count what --fix would
    apply: a file whose fixer kills its worker is reported as linted and counts nothing."""
    log = tmp_path / "attempts.log"
    monkeypatch.setenv(dying_lint.LOG_ENV, str(log))
    monkeypatch.setattr(cli, "fix_file", dying_lint.fix_or_die)  # linting is left alone
    for index in range(20):
        (tmp_path / f"m{index:02}.py").write_text(DISCARDED + ("# die: SIGSEGV\n" * (index == 4)))

    assert cli.main(["check", "--no-cache", "--jobs", "2", str(tmp_path)]) == 1

    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 20
    assert "DVL003" not in captured.out + captured.err
    assert captured.err == "Found 20 problems in 20 files (DVL201: 20); 19 fixable with --fix.\n"
    assert attempts(log, "fix")["m04.py"] == 2  # in its chunk, then alone
