"""What a notebook costs next to the same code as a Python file.

Usage::

    python benchmarks/notebooks.py FOLDER [--repeat 3] [--json OUT]

Every ``*.ipynb`` under FOLDER (outside ``.ipynb_checkpoints``) is linted two
ways in one process, alternating, best of ``--repeat`` each:

(a) as a notebook: its bytes read as JSON, the cells joined, IPython lines
    made inert, linted, each finding moved to its cell (``notebooks.linting``);
(b) as Python: the program (a) analyses (without the cells that do not parse,
    which (a) finds and leaves out), handed to ``engine.lint_source`` as the
    text of a ``.py`` file, fixes built as (a) builds them.

Both sides parse with LibCST and analyse the same program, so the ratio
(a)/(b) is what reading a notebook adds. The target (issue 14) is within 1.2.
Notebooks that do not mention torch cost almost nothing either way and are
counted too. A script, not a test: wall-clock numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

from devlint.config import DEFAULT_SETTINGS
from devlint.diagnostic import Diagnostic
from devlint.notebooks.linting import lint_notebook, notebook_report, read_or_notice
from devlint.notebooks.reading import NotebookError, read_notebook
from devlint.running.engine import lint_source


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    cases = []
    for path in sorted(args.folder.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        data = path.read_bytes()
        try:
            notebook = read_notebook(data)
        except NotebookError:
            continue
        program = notebook_report(notebook, str(path), DEFAULT_SETTINGS).program.text
        cases.append((str(path), data, program))
    as_notebook = as_python = 0.0
    for name, data, program in cases:
        notebook_best = python_best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            notebook = read_or_notice(data, name)
            if not isinstance(notebook, Diagnostic):
                lint_notebook(notebook, name, DEFAULT_SETTINGS)
            notebook_best = min(notebook_best, time.perf_counter() - start)
            start = time.perf_counter()
            lint_source(program, name + ".py", DEFAULT_SETTINGS)
            python_best = min(python_best, time.perf_counter() - start)
        as_notebook += notebook_best
        as_python += python_best
    ratio = as_notebook / as_python if as_python else float("nan")
    result = {
        "notebooks": len(cases),
        "seconds_as_notebooks": round(as_notebook, 3),
        "seconds_as_python": round(as_python, 3),
        "ratio": round(ratio, 3),
        "python": platform.python_version(),
    }
    print(
        f"{len(cases)} notebooks: {as_notebook:.2f} s as notebooks, {as_python:.2f} s as the "
        f"same code in .py files: {ratio:.2f}x (target 1.2x)"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
