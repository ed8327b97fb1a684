"""What ``devlint confirm`` and ``devlint run`` do (torch runs only in children).

Their options are in ``devlint.harness.commands``: linting never imports this module."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from devlint.harness import evidence as evidence_file
from devlint.harness import launch
from devlint.harness.confirm import (
    Evidence,
    available_gpus,
    confirm,
    differences,
    failed,
    select_rules,
)
from devlint.harness.progress import Progress
from devlint.harness.report import combine, read_reports
from devlint.harness.run_options import run_options
from devlint.harness.summary import run_summary
from devlint.harness.termination import (
    Terminated,
    end_process_group,
    ends_on_signals,
    interruptible,
)
from devlint.harness.verdict import Outcome
from devlint.harness.words import counted
from devlint.inputs.reading import read_regular_file
from devlint.notebooks.reading import NotebookError, is_notebook, read_notebook

DEFAULT_EVIDENCE = Path("docs/evidence.json")


# confirm ---------------------------------------------------------------------------------


def _needs_torch(command: str) -> bool:
    if importlib.util.find_spec("torch") is not None:
        return False
    print(f"devlint: error: {command} needs torch: pip install 'devlint[harness]'", file=sys.stderr)
    return True


@ends_on_signals
def confirm_command(args: argparse.Namespace) -> int:
    if _needs_torch("confirm"):
        return 2
    rules = select_rules(args.codes)
    if not rules:
        print(f"devlint: error: no rule matches {' '.join(args.codes)}", file=sys.stderr)
        return 2
    backends = _backends(args.backend, args.gpus)
    if isinstance(backends, str):
        print(f"devlint: error: {backends}", file=sys.stderr)
        return 2
    previous = evidence_file.previous_seconds(evidence_file.load(args.json or DEFAULT_EVIDENCE))
    started = time.monotonic()
    found: list[Evidence] = []
    for backend, gpus in backends:
        with Progress(3 * len(rules), f"{backend} ({counted(gpus, 'GPU')})") as progress:
            found += confirm(
                rules, backend, gpus, args.jobs, args.timeout, previous, progress.advance
            )
    elapsed = time.monotonic() - started
    _print_table(found)
    _print_totals(found, elapsed)
    diverging = differences(found)
    if len(backends) == 2:
        _print_fidelity(diverging)
    if args.json:
        evidence_file.write(args.json, found)
    return 1 if failed(found) or diverging else 0


def _backends(choice: str, gpus: int) -> list[tuple[str, int]] | str:
    """The backends to run with their GPU counts, or why they cannot run."""
    if choice == "emulated":
        return [("emulated", gpus)]
    real = available_gpus("cuda", gpus)
    if choice == "auto":
        return [("cuda", real)] if real else [("emulated", gpus)]
    if not real:
        return f"--backend {choice} needs a GPU, and torch sees none here" + (
            ": the fidelity check cannot run" if choice == "both" else ""
        )
    return [("cuda", real)] if choice == "cuda" else [("cuda", real), ("emulated", gpus)]


def _print_table(found: Sequence[Evidence]) -> None:
    header = ("RULE", "EXAMPLE", "BACKEND", "OUTCOME", "SECONDS", "WHAT HAPPENED")
    rows = [
        (e.rule, e.example, e.backend, e.outcome.value, f"{e.seconds:.1f}", e.observed)
        for e in found
    ]
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(5)]
    previous_rule = None
    for row in [header, *rows]:
        if previous_rule is not None and row[0] != previous_rule:
            print()
        previous_rule = row[0] if row is not header else None
        cells = [cell.ljust(width) for cell, width in zip(row[:5], widths, strict=True)]
        print("  ".join([*cells, row[5]]))


def _print_totals(found: Sequence[Evidence], seconds: float) -> None:
    counts = {outcome: sum(e.outcome is outcome for e in found) for outcome in Outcome}
    parts = [f"{counts[outcome]} {outcome.value}" for outcome in Outcome if counts[outcome]]
    examples = counted(len(found), "example")
    print(f"\n{examples}: {', '.join(parts)} in {seconds:.1f} s", file=sys.stderr)


def _print_fidelity(diverging: Sequence[tuple[str, str, Evidence, Evidence]]) -> None:
    if not diverging:
        print("Fidelity: real CUDA and the emulator agree on every example.", file=sys.stderr)
        return
    examples = counted(len(diverging), "example")
    print(f"Fidelity: real CUDA and the emulator differ on {examples}:")
    for rule, example, cuda, emulated in diverging:
        print(f"  {rule} {example}")
        print(f"    cuda:     {cuda.outcome.value}: {cuda.observed}")
        print(f"    emulated: {emulated.outcome.value}: {emulated.observed}")


# run ----------------------------------------------------------------------------------------


def script_and_arguments(command_line: list[str]) -> tuple[str, list[str]] | str:
    """``SCRIPT [--] ARGS...`` split into the script and its arguments, or why it is refused.

    Everything after the script is the script's, as with ``python`` and ``torchrun``. Only
    devlint's own options right after the script are refused: ``devlint run train.py --gpus 1
    -- ...`` used to mean devlint's, and reading them as the script's would change it silently.
    """
    words = command_line[1:] if command_line[:1] == ["--"] else command_line
    if not words:
        return "the script to run is missing"
    script, rest = words[0], words[1:]
    if rest[:1] == ["--"]:
        return script, rest[1:]
    options = _run_options_only(rest[: rest.index("--") if "--" in rest else len(rest)])
    if options:
        before = shlex.join(["devlint", "run", *options, script, *rest[len(options) :]])
        after = shlex.join(["devlint", "run", script, "--", *rest])
        return (
            f"{shlex.join(options)} after the script is ambiguous: for devlint, put it before "
            f"the script ({before}); for the script, put -- after the script ({after})"
        )
    return script, rest


def _run_options_only(words: list[str]) -> list[str]:
    """``words`` if they are all options of ``devlint run`` itself, else nothing."""
    parser = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    run_options(parser)
    try:
        _, unknown = parser.parse_known_args(words)
    except argparse.ArgumentError:
        return []
    return [] if unknown else words


@ends_on_signals
def run_command(args: argparse.Namespace) -> int:
    if _needs_torch("run"):
        return 2
    split = script_and_arguments(args.command_line)
    if isinstance(split, str):
        print(f"devlint run: error: {split}", file=sys.stderr)
        return 2
    script, script_args = split
    if not Path(script).is_file():
        print(f"devlint: error: {script}: no such file", file=sys.stderr)
        return 2
    problem = _notebook_problem(script) if is_notebook(script) else None
    if problem is not None:
        print(f"devlint run: error: {script}: {problem}", file=sys.stderr)
        return 2
    # ignore_cleanup_errors: a process the program left behind may still write its report
    with tempfile.TemporaryDirectory(prefix="devlint-run-", ignore_cleanup_errors=True) as reports:
        command = [
            sys.executable,
            "-m",
            "devlint.harness.launch",
            "--backend",
            "emulated",
            "--gpus",
            str(args.gpus),
            "--report",
            reports,
            script,
            *script_args,
        ]
        env = {**os.environ, "PYTHONPATH": launch.package_path()}
        status = _run_in_own_session(command, env)
        report = combine(read_reports(reports))
    print(run_summary(report, args.gpus, status), file=sys.stderr, end="")
    if args.json:
        args.json.write_text(json.dumps(report.__dict__, indent=2) + "\n", encoding="utf-8")
    return status


def _run_in_own_session(command: list[str], env: dict[str, str]) -> int:
    """Run ``command`` in a session of its own, so that ending devlint ends the program and
    every process it started (devlint passes a Ctrl-C on to them, as the terminal would)."""
    process = subprocess.Popen(command, env=env, start_new_session=True)
    try:
        with interruptible():
            return process.wait()
    except Terminated as stop:
        end_process_group(process, stop.number)
        raise


def _notebook_problem(path: str) -> str | None:
    """Why a notebook cannot run as Python (not one devlint reads, another kernel)."""
    try:
        notebook = read_notebook(read_regular_file(path))
    except (OSError, NotebookError) as error:
        return f"cannot read notebook: {error}"
    if notebook.language not in (None, "python"):
        return f"not a Python notebook (its kernel's language is {notebook.language})"
    return None
