"""devlint on real notebooks nobody here wrote: what it reports, and how much of it is right.

Usage::

    python benchmarks/realworld/notebooks/score.py --root /work/realworld-notebooks [--extract]

``projects.json`` pins tutorial and course repositories full of notebooks;
``--extract`` writes each missing checkout ``ROOT/<owner>+<name>/`` (its
``*.ipynb`` and ``*.py`` files) from the mirror ``/work/.mirror/<owner>+<name>/repo``
that the ``fetch`` tool gives. Each checkout is linted as a user would lint
it (``python -m devlint check --format json --no-cache --exit-zero .`` in the
checkout), and every finding in a notebook is scored against
``verdicts.jsonl`` (true / debatable / false, with a reason), keyed by
repository, path, cell, code, the reported line's text and its occurrence.
Prints notebooks, code cells, findings by verdict and code, the notices
(DVL001: a cell that does not parse, DVL002: a file that is no notebook,
DVL003: an internal error) and the findings without a verdict.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from checkouts import MARKER, mark_root, write_checkout  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--extract", action="store_true")
    args = parser.parse_args()
    verdicts = {_key(entry): entry for entry in map(json.loads, _lines(HERE / "verdicts.jsonl"))}
    totals: Counter[str] = Counter()
    notices: list[str] = []
    untriaged: list[str] = []
    for project in json.loads((HERE / "projects.json").read_text(encoding="utf-8")):
        repo, commit = project["repo"], project["commit"]
        checkout = args.root / repo.replace("/", "+")
        if args.extract and not (checkout / MARKER).is_file():
            gitdir = args.mirror / repo.replace("/", "+") / "repo"
            gitdir = gitdir / ".git" if (gitdir / ".git").is_dir() else gitdir
            write_checkout(gitdir, commit, checkout, suffixes=(".py", ".ipynb"))
        if not (checkout / MARKER).is_file():
            print(f"{repo}: no checkout (run with --extract)")
            continue
        mark_root(checkout)
        notebooks = [p for p in checkout.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts]
        totals["notebooks"] += len(notebooks)
        totals["code cells"] += sum(map(_code_cells, notebooks))
        seen: Counter[tuple] = Counter()
        for found in _lint(checkout):
            if not found["path"].endswith(".ipynb"):
                continue
            where = f"{repo}:{found['path']}:cell {found.get('cell')}:{found['line']}"
            if found["code"].startswith("DVL00"):
                notices.append(f"{where} {found['code']} {found['message'][:90]}")
                totals[found["code"]] += 1
                continue
            text = _line_text(checkout / found["path"], found["cell"], found["line"])
            key = (repo, found["path"], found["cell"], found["code"], text)
            entry = verdicts.get((*key, seen[key]))
            seen[key] += 1
            verdict = entry["verdict"] if entry else "untriaged"
            totals[verdict] += 1
            totals[f"{found['code']} {verdict}"] += 1
            if entry is None:
                untriaged.append(f"{where} {found['code']} {text}")
    findings = sum(totals[v] for v in ("true", "debatable", "false", "untriaged"))
    print(
        f"notebooks {totals['notebooks']}, code cells {totals['code cells']}, findings {findings}:"
    )
    print("  " + ", ".join(f"{v} {totals[v]}" for v in ("true", "debatable", "false", "untriaged")))
    for name in sorted(k for k in totals if k.startswith("DVL") and " " in k):
        print(f"  {name}: {totals[name]}")
    print("notices: " + ", ".join(f"{c} {totals[c]}" for c in ("DVL001", "DVL002", "DVL003")))
    print("\n".join(f"  {line}" for line in notices))
    print(f"untriaged: {len(untriaged)}")
    print("\n".join(f"  {line}" for line in untriaged))
    return 0


def _lint(checkout: Path) -> list[dict]:
    command = [sys.executable, "-m", "devlint", "check", "--format", "json", "--no-cache"]
    done = subprocess.run(
        [*command, "--exit-zero", "."], cwd=checkout, capture_output=True, text=True, check=False
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise SystemExit(f"{checkout}: devlint exited {done.returncode}: {done.stderr[-500:]}")
    return json.loads(done.stdout)


def _code_cells(path: Path) -> int:
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (ValueError, AttributeError):
        return 0
    return sum(1 for cell in cells if isinstance(cell, dict) and cell.get("cell_type") == "code")


def _line_text(path: Path, cell: int, line: int) -> str:
    source = json.loads(path.read_text(encoding="utf-8"))["cells"][cell - 1]["source"]
    text = "".join(source) if isinstance(source, list) else source
    lines = text.split("\n")
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def _key(entry: dict) -> tuple:
    return (
        entry["repo"],
        entry["path"],
        entry["cell"],
        entry["code"],
        entry["text"],
        entry["occurrence"],
    )


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


if __name__ == "__main__":
    sys.exit(main())
