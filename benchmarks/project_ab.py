"""Two checkouts of devlint against each other on whole projects, in alternating processes.

Usage::

    python benchmarks/project_ab.py ROUNDS CHECKOUT_A CHECKOUT_B PROJECT [PROJECT ...]

Each round runs one process per checkout (their order alternates from round
to round): it reads every ``.py`` file of the projects, then lints each in
view of its project through one index per project (what ``devlint check
-j1`` does on the folder), and prints the CPU time of the lint and how many
modules the indexes ran. Reported: each checkout's best time and B's best
over A's. On a shared machine one process can run 20% slower than the next
for no reason of its own; alternating and taking the best of several rounds
is the cheapest defence. A script, not a test.
"""

from __future__ import annotations

import subprocess
import sys

CHILD = r"""
import sys, time
from pathlib import Path
from devlint.config import DEFAULT_SETTINGS
from devlint.running.engine import lint_source
from devlint.project.finder import Project, project_root
from devlint.project.index import ProjectIndex

sources = [
    (path, path.read_bytes().decode("utf-8", "replace"))
    for folder in sys.argv[1:]
    for path in sorted(Path(folder).rglob("*.py"))
    if path.is_file() and ".git" not in path.parts
]
indexes = {}
for path, text in sources:
    root = project_root(path)
    if root not in indexes:
        indexes[root] = ProjectIndex(Project(root), DEFAULT_SETTINGS)
    indexes[root].set_text(path, text)
start = time.process_time()
for path, text in sources:
    lint_source(text, str(path), importer=indexes[project_root(path)].importer_for(path))
run = sum(getattr(index, "modules_run", len(index._entries)) for index in indexes.values())
print(time.process_time() - start, run)
"""


def main(argv: list[str]) -> int:
    rounds, checkouts, projects = int(argv[0]), argv[1:3], argv[3:]
    times: dict[str, list[float]] = {checkout: [] for checkout in checkouts}
    for round_ in range(rounds):
        for checkout in checkouts if round_ % 2 == 0 else checkouts[::-1]:
            done = subprocess.run(
                [sys.executable, "-c", CHILD, *projects],
                cwd=checkout,
                env={"PYTHONPATH": checkout, "PATH": "/usr/bin:/bin"},
                capture_output=True,
                text=True,
                check=True,
            )
            seconds, modules = done.stdout.split()
            times[checkout].append(float(seconds))
            print(f"{checkout}: {float(seconds):.2f} s CPU, {modules} modules run", flush=True)
    a, b = (min(times[checkout]) for checkout in checkouts)
    print(f"best: A {a:.2f} s, B {b:.2f} s; B/A {b / a:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
