"""devlint lints at raised collector thresholds and leaves a hosting process its own.

The thresholds are process-wide, so every test here puts the process's own back
(the ``own_thresholds`` fixture), and what must outlive a call (``devlint check``,
a worker's start) runs in a subprocess.
"""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest
from snippets import MIXED

from devlint.running import engine, gc_thresholds
from devlint.running.gc_thresholds import LINTING_THRESHOLDS, fewer_collections

pytestmark = pytest.mark.skipif(
    sys.implementation.name != "cpython", reason="the thresholds are CPython's"
)

PYTHON_DEFAULTS = (700, 10, 10)


@pytest.fixture(autouse=True)
def own_thresholds():
    before = gc.get_threshold()
    gc.set_threshold(*PYTHON_DEFAULTS)
    yield
    gc.set_threshold(*before)


def test_a_lint_runs_at_raised_thresholds_and_puts_the_process_own_back():
    with fewer_collections():
        assert gc.get_threshold() == LINTING_THRESHOLDS
    assert gc.get_threshold() == PYTHON_DEFAULTS


def test_nested_lints_put_them_back_only_when_the_last_ends():
    with fewer_collections():
        with fewer_collections():
            pass
        assert gc.get_threshold() == LINTING_THRESHOLDS
    assert gc.get_threshold() == PYTHON_DEFAULTS


def test_a_lint_that_raises_still_puts_them_back():
    with pytest.raises(ValueError), fewer_collections():
        raise ValueError
    assert gc.get_threshold() == PYTHON_DEFAULTS


def test_higher_thresholds_of_the_process_are_kept():
    gc.set_threshold(500_000, 5, 100)
    with fewer_collections():
        assert gc.get_threshold() == (500_000, 30, 100)
    assert gc.get_threshold() == (500_000, 5, 100)


def test_a_collector_the_process_turned_off_stays_off():
    gc.set_threshold(0, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == (0, 10, 10)
    gc_thresholds.for_whole_process()
    assert gc.get_threshold() == (0, 10, 10)


def test_lint_report_analyses_at_raised_thresholds(monkeypatch):
    seen = []
    real_analyse = engine.analyse

    def analyse(*args, **kwargs):
        seen.append(gc.get_threshold())
        return real_analyse(*args, **kwargs)

    monkeypatch.setattr(engine, "analyse", analyse)
    diagnostics = engine.lint_source(MIXED, "mixed.py")
    assert seen == [LINTING_THRESHOLDS]
    assert diagnostics  # the lint itself ran as usual
    assert gc.get_threshold() == PYTHON_DEFAULTS


def _thresholds_after(code: str) -> tuple[int, ...]:
    """The thresholds a fresh interpreter at Python's defaults ends with after ``code``."""
    script = f"import gc\ngc.set_threshold(*{PYTHON_DEFAULTS})\n{code}\nprint(gc.get_threshold())"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return tuple(int(part) for part in done.stdout.strip().splitlines()[-1].strip("()").split(","))


def test_devlint_check_keeps_them_raised_for_the_whole_process(tmp_path: Path):
    (tmp_path / "train.py").write_text(MIXED, encoding="utf-8")
    code = (
        "from devlint.frontends.cli import main\n"
        f"main(['check', '--no-cache', '--jobs', '1', {str(tmp_path)!r}])"
    )
    assert _thresholds_after(code) == LINTING_THRESHOLDS


def test_a_worker_starts_at_raised_thresholds():
    code = "from devlint.running.workers import start_worker\nstart_worker()"
    assert _thresholds_after(code) == LINTING_THRESHOLDS


def test_the_language_server_keeps_them_raised_for_the_whole_process():
    code = (
        "from devlint.frontends import lsp\n"
        "class Quiet:\n"
        "    def start_io(self, stdin, stdout):\n"
        "        pass\n"
        "lsp.create_server = Quiet\n"
        "lsp.serve()\n"
        "import sys\n"
        "sys.stdout = sys.__stdout__"
    )
    assert _thresholds_after(code) == LINTING_THRESHOLDS
