"""What one file costs when nothing else of its project was looked at yet: a
``devlint check train.py`` or pre-commit run on one changed file, a flake8
process's first file, an editor opening a file.

Usage::

    python benchmarks/one_file.py ROOT [--per-project 5] [--repeat 1] [--trees] [--json FILE]

``ROOT`` holds one project per folder (the precision corpus). From each
project, ``--per-project`` files that mention torch are drawn (a fixed seed,
so runs compare); each is linted in view of its project through a fresh
project index, so every module it imports is read, parsed and run, and its
own parse is timed beside it, best of ``--repeat``. Reported: the lint time
over the parse time, summed and per file, how many modules the index ran, and
how much of the lint was LibCST parsing (the file and the modules it imports).

``--trees`` also lints each file with the parsed trees kept between runs
(``devlint.inputs.tree_cache``, in a fresh temporary folder): once storing the trees
of the modules it imports (a first pre-commit run), then reading them back
(every later one), best of ``--repeat``. Everything runs at devlint's
collector thresholds, as ``devlint check`` does (before stop 30, at
Python's). Stop 30's ``--reload`` (trees pickled, read back and checked
against their text, before the cache existed) is in git history at
``b526a98``.

A script, not a test: wall-clock numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import libcst as cst

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from devlint.config import DEFAULT_SETTINGS
from devlint.inputs.tree_cache import TreeCache
from devlint.project import index as project_index
from devlint.project.finder import Project, project_root
from devlint.project.index import ProjectIndex
from devlint.running import gc_thresholds
from devlint.running.engine import lint_source

SEED = 7


def sample(root: Path, per_project: int) -> list[Path]:
    """``per_project`` files mentioning torch from each project folder of ``root``."""
    chosen: list[Path] = []
    for project in sorted(path for path in root.iterdir() if path.is_dir()):
        files = sorted(
            path
            for path in project.rglob("*.py")
            if path.is_file() and ".git" not in path.parts and "torch" in _text(path)
        )
        random.Random(SEED).shuffle(files)
        chosen += files[:per_project]
    return chosen


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")


def best(work, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


class ParseWatch:
    """Stands in for ``libcst.parse_module`` while a lint runs (the index's parses and the
    file's own): times each parse, keeps the texts."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.texts: list[str] = []

    def __call__(self, source: str) -> cst.Module:
        start = time.perf_counter()
        module = _PARSE(source)
        self.seconds += time.perf_counter() - start
        self.texts.append(source)
        return module


_PARSE = cst.parse_module


def measure(path: Path, repeat: int, trees: bool) -> dict[str, object] | None:
    text = _text(path)
    try:
        cst.parse_module(text)
    except Exception:  # not Python LibCST can read: not a file this measures
        return None
    modules: list[int] = []
    watches: list[ParseWatch] = []

    def lint() -> None:
        watch = ParseWatch()
        project_index.cst.parse_module = watch
        try:
            index = ProjectIndex(Project(project_root(path)), DEFAULT_SETTINGS)
            lint_source(text, str(path), importer=index.importer_for(path))
        finally:
            project_index.cst.parse_module = _PARSE
        modules.append(index.modules_run)
        watches.append(watch)

    parse = best(lambda: cst.parse_module(text), repeat)
    linted = best(lint, repeat)
    row = {
        "file": str(path),
        "parse_s": parse,
        "lint_s": linted,
        "modules": modules[0],
        "parsing_in_lint_s": min(watch.seconds for watch in watches),
    }
    if trees:
        row.update(with_trees(path, text, repeat))
    return row


def with_trees(path: Path, text: str, repeat: int) -> dict[str, float]:
    """The lint of ``path`` storing the trees of its imports, then reading them back."""
    with tempfile.TemporaryDirectory() as folder:
        cache = TreeCache(Path(folder), os.urandom(32))

        def lint() -> None:
            index = ProjectIndex(Project(project_root(path)), DEFAULT_SETTINGS, trees=cache)
            lint_source(text, str(path), importer=index.importer_for(path))

        return {"storing_s": best(lint, 1), "from_trees_s": best(lint, repeat)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--per-project", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--trees", action="store_true", help="also lint with the tree cache")
    args = parser.parse_args(argv)
    gc_thresholds.for_whole_process()  # as `devlint check` runs
    measured = [
        measure(path, args.repeat, args.trees) for path in sample(args.root, args.per_project)
    ]
    rows = [row for row in measured if row is not None]
    if not rows:
        print("no files")
        return 1
    parse = sum(row["parse_s"] for row in rows)
    lint = sum(row["lint_s"] for row in rows)
    ratios = [row["lint_s"] / row["parse_s"] for row in rows]
    for row in sorted(rows, key=lambda row: row["lint_s"])[-5:]:
        print(f"{row['lint_s']:7.2f} s {row['modules']:5d} modules  {row['file']}")
    print(
        f"{len(rows)} files: lint {lint:.1f} s against their own parse {parse:.1f} s "
        f"({lint / parse:.2f}); median file {statistics.median(ratios):.2f}; "
        f"modules run {sum(row['modules'] for row in rows)}"
    )
    parsing = sum(row["parsing_in_lint_s"] for row in rows)
    print(f"LibCST parsing inside the lints: {parsing:.1f} s ({parsing / lint:.0%} of them)")
    if args.trees:
        storing = sum(row["storing_s"] for row in rows)
        from_trees = sum(row["from_trees_s"] for row in rows)
        print(
            f"with the tree cache: storing {storing:.1f} s ({storing / lint:.2f} of the lints), "
            f"then read back {from_trees:.1f} s ({from_trees / lint:.2f}); median file "
            f"{statistics.median(row['from_trees_s'] / row['lint_s'] for row in rows):.2f}"
        )
    if args.json:
        report = {"files": rows, "lint_s": lint, "parse_s": parse}
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
