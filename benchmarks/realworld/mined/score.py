"""devlint's recall on real device bugs mined from public bug-fix commits.

Usage::

    python benchmarks/realworld/mined/score.py --root /work/realworld-mined [--extract]
        [--manifest FILE] [--mirror /work/.mirror] [--only NAME ...] [--json OUT] [--verbose]

``bugs.json`` (beside this script; ``--manifest`` names another, such as
``external.json``) lists the cases. Each names ``repo``
(``owner/name``), ``fix`` (the fixing commit), ``parent`` (the commit before
it), ``path`` (the buggy file, in the parent), ``lines`` (``[start, end]``:
the parent's lines where a linter should report), ``category``, ``one_file``
(whether both sides of the bug are visible in that one file) and
``evidence``. Optional: ``fixed_path`` (the file in the fix, when it was
renamed), ``fixed_lines`` (the corresponding lines of the fixed file;
default: the parent's range mapped through the diff) and ``alt_lines`` (the
other side of the bug: where the misplaced value comes from or is used; a
report there is counted apart, as *lenient*).

The trees live in ``ROOT/<owner>+<name>@<commit>/``: the *whole* repository
tree at that commit (every ``*.py``, ``*.pyi`` and ``pyproject.toml`` blob),
so that an analysis that follows imports sees the project. With
``--extract`` a missing tree is written out from the bare mirror
``MIRROR/<owner>+<name>/repo`` (what the ``fetch`` tool or ``git clone
--mirror`` gives); ``.devlint-ledger-commit`` records the commit.

Each buggy file is linted in its repository root, as a user would run
devlint there, twice: with the default rule selection and with every rule
(``--select DVL``): the current interpreter's ``devlint check --format json
--no-cache --exit-zero --jobs 1 FILES``. A case is *found* when a rule
finding (notices ``DVL001``-``DVL004`` do not count) starts inside its line
range. The fixed file is linted the same way; a finding inside the
corresponding range is *still reported after the fix*.

Prints recall (found / cases) overall, by category, on the one-file cases
and on the cases that need another file (overall and by category), for both
selections, then the cases still reported after the fix.
Exits 0 whatever it finds; 2 only when ``bugs.json`` is malformed.
"""

from __future__ import annotations

import argparse
import difflib
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from devlint.notices import NOTICE_SUMMARIES

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # checkouts.py
from checkouts import MARKER, mark_root, write_checkout

HERE = Path(__file__).resolve().parent
BUGS = HERE / "bugs.json"
REQUIRED = ("repo", "fix", "parent", "path", "lines", "category", "one_file", "evidence")
SELECTIONS = {"default": [], "all": ["--select", "DVL"]}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    cases = _read_cases(Path(args.manifest))
    if args.only:
        wanted = set(args.only)
        cases = [c for c in cases if {c["repo"], _dirname(c["repo"])} & wanted]
    root = Path(args.root)
    mirror = Path(args.mirror)
    # (tree, path) -> selection -> findings
    needed: dict[Path, set[str]] = defaultdict(set)
    skipped = []
    for case in cases:
        problems = []
        for side, commit, path in (
            ("parent", case["parent"], case["path"]),
            ("fix", case["fix"], case.get("fixed_path", case["path"])),
        ):
            tree = _tree(root, case["repo"], commit)
            problem = _prepare(tree, commit, mirror / _dirname(case["repo"]) / "repo", args.extract)
            if problem is None and not (tree / path).is_file():
                problem = f"{path} missing at {commit[:12]}"
            if problem:
                problems.append(f"{side}: {problem}")
            else:
                needed[tree].add(path)
        if problems:
            skipped.append((case, "; ".join(problems)))
    linted: dict[tuple[Path, str, str], list[dict]] = {}
    for tree, paths in needed.items():
        for selection, flags in SELECTIONS.items():
            for finding in _lint(tree, sorted(paths), flags):
                linted.setdefault((tree, finding["path"], selection), []).append(finding)
    results = []
    for case in cases:
        if any(case is c for c, _ in skipped):
            continue
        parent_tree = _tree(root, case["repo"], case["parent"])
        fix_tree = _tree(root, case["repo"], case["fix"])
        fixed_path = case.get("fixed_path", case["path"])
        start, end = case["lines"]
        fixed_range = case.get("fixed_lines") or _map_range(
            parent_tree / case["path"], fix_tree / fixed_path, start, end
        )
        row = {
            "id": _case_id(case),
            "category": case["category"],
            "one_file": case["one_file"],
        }
        for selection in SELECTIONS:
            findings = linted.get((parent_tree, case["path"], selection), [])
            before = _inside(findings, start, end)
            after = _inside(linted.get((fix_tree, fixed_path, selection), []), *fixed_range)
            row[selection] = [f"{f['code']}@{f['line']}" for f in before]
            row[f"{selection}_after_fix"] = [f"{f['code']}@{f['line']}" for f in after]
            if "alt_lines" in case:
                other = _inside(findings, *case["alt_lines"])
                row[f"{selection}_lenient"] = [f"{f['code']}@{f['line']}" for f in other]
        row["fixed_lines"] = list(fixed_range)
        results.append(row)
    report = {"cases": results, "skipped": [(_case_id(c), why) for c, why in skipped]}
    report["summary"] = _summary(results)
    _print(report, args.verbose)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", required=True, help="where the extracted trees live")
    parser.add_argument(
        "--manifest", default=str(BUGS), help="the cases (default: bugs.json beside this script)"
    )
    parser.add_argument(
        "--extract", action="store_true", help="create missing trees from the mirrors"
    )
    parser.add_argument(
        "--mirror", default="/work/.mirror", help="bare mirrors: MIRROR/<owner>+<name>/repo"
    )
    parser.add_argument("--only", nargs="*", help="score only these repos (owner/name)")
    parser.add_argument("--json", help="also write the full report as JSON here")
    parser.add_argument("--verbose", action="store_true", help="list every case")
    return parser


def _dirname(repo: str) -> str:
    return repo.replace("/", "+")


def _tree(root: Path, repo: str, commit: str) -> Path:
    return root / f"{_dirname(repo)}@{commit}"


def _case_id(case: dict) -> str:
    return f"{case['repo']}@{case['fix'][:10]}:{case['path']}"


def _read_cases(path: Path) -> list[dict]:
    try:
        cases = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        _malformed(f"{path}: {error}")
    seen = set()
    for number, case in enumerate(cases):
        missing = [k for k in REQUIRED if k not in case]
        if missing:
            _malformed(f"{path}: case {number} lacks {missing}")
        lines = case["lines"]
        if not (isinstance(lines, list) and len(lines) == 2 and 0 < lines[0] <= lines[1]):
            _malformed(f"{path}: case {number}: lines must be [start, end]")
        for key in ("fix", "parent"):
            if len(case[key]) != 40:
                _malformed(f"{path}: case {number}: {key} must be a full commit hash")
        key = (case["repo"], case["fix"], case["path"], tuple(lines))
        if key in seen:
            _malformed(f"{path}: case {number} duplicates {key}")
        seen.add(key)
    return cases


def _malformed(problem: str) -> None:
    print(problem, file=sys.stderr)
    raise SystemExit(2)


# trees -----------------------------------------------------------------------


def _prepare(tree: Path, commit: str, gitdir: Path, extract: bool) -> str | None:
    """None when ``tree`` holds ``commit``, else why it cannot be linted."""
    marker = tree / MARKER
    if marker.exists():
        found = marker.read_text().strip()
        if found != commit:
            return f"{tree} holds {found}, not {commit}"
        mark_root(tree)
        return None
    if not extract:
        return f"no tree at {tree}; run with --extract"
    if not gitdir.is_dir():
        return f"no mirror at {gitdir}"
    write_checkout(gitdir, commit, tree)
    return None


def _map_range(parent: Path, fixed: Path, start: int, end: int) -> tuple[int, int]:
    """The fixed file's lines that correspond to the parent's ``start..end``."""
    old = parent.read_text(encoding="utf-8", errors="replace").splitlines()
    new = fixed.read_text(encoding="utf-8", errors="replace").splitlines()
    low = high = None
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for _tag, i1, i2, j1, j2 in matcher.get_opcodes():
        # 1-based: old lines i1+1..i2 correspond to new lines j1+1..j2
        outside = i2 < start or i1 + 1 > end
        at_edge = i1 == i2 and start <= i1 + 1 <= end + 1 and j2 > j1
        if outside and not at_edge:
            continue  # outside the range (an insertion at its edge counts)
        if j2 == j1:
            continue
        if _tag == "equal":
            a, b = max(i1 + 1, start), min(i2, end)
            lo, hi = j1 + 1 + (a - i1 - 1), j1 + (b - i1)
        else:
            lo, hi = j1 + 1, j2
        low = lo if low is None else min(low, lo)
        high = hi if high is None else max(high, hi)
    if low is None:  # the whole range was deleted: the line where it was
        anchor = min(len(new), max(1, start))
        return anchor, anchor
    return low, high


# linting ---------------------------------------------------------------------


def _lint(tree: Path, paths: list[str], flags: list[str]) -> list[dict]:
    command = [sys.executable, "-m", "devlint", "check", "--format", "json", "--no-cache"]
    command += ["--exit-zero", "--jobs", "1", "--no-respect-gitignore", *flags, "--", *paths]
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"{tree}: devlint exited {done.returncode}: {done.stderr[-2000:]}", file=sys.stderr)
        return []
    out = []
    for finding in json.loads(done.stdout):
        if finding["code"] in NOTICE_SUMMARIES:
            continue
        finding["path"] = Path(finding["path"]).as_posix().removeprefix("./")
        out.append(finding)
    return out


def _inside(findings: list[dict], start: int, end: int) -> list[dict]:
    return [f for f in findings if start <= f["line"] <= end]


# report ----------------------------------------------------------------------


def _summary(results: list[dict]) -> dict:
    summary: dict = {}
    for selection in SELECTIONS:
        groups: dict[str, list[dict]] = defaultdict(list)
        for row in results:
            groups["all cases"].append(row)
            if row["one_file"]:
                groups["one-file cases"].append(row)
            else:
                groups["cases that need another file"].append(row)
                groups[f"another file, category: {row['category']}"].append(row)
            groups[f"category: {row['category']}"].append(row)
        table = {}
        for name, rows in groups.items():
            found = sum(1 for r in rows if r[selection])
            after = sum(1 for r in rows if r[f"{selection}_after_fix"])
            lenient = sum(1 for r in rows if r[selection] or r.get(f"{selection}_lenient"))
            table[name] = {"cases": len(rows), "found": found, "still_after_fix": after}
            if any(f"{selection}_lenient" in r for r in rows):
                table[name]["found_lenient"] = lenient
        summary[selection] = table
    return summary


def _print(report: dict, verbose: bool) -> None:
    results = report["cases"]
    for selection in SELECTIONS:
        title = "default rules" if selection == "default" else "all rules (--select DVL)"
        print(f"{title}:")
        lenient = any("found_lenient" in row for row in report["summary"][selection].values())
        extra = f" {'lenient':>7}" if lenient else ""
        print(f"  {'':<64} {'cases':>5} {'found':>5} {'recall':>6} {'after fix':>9}{extra}")
        table = report["summary"][selection]
        categories = sorted(k for k in table if k.startswith("category:"))
        elsewhere = sorted(k for k in table if k.startswith("another file, category:"))
        order = [
            "all cases",
            "one-file cases",
            "cases that need another file",
            *categories,
            *elsewhere,
        ]
        for name in order:
            if name not in table:
                continue
            row = table[name]
            recall = f"{row['found'] / row['cases']:.0%}" if row["cases"] else "-"
            also = f" {row.get('found_lenient', '-'):>7}" if lenient else ""
            print(
                f"  {name[:64]:<64} {row['cases']:>5} {row['found']:>5} {recall:>6} "
                f"{row['still_after_fix']:>9}{also}"
            )
        print()
    print("(found = a rule finding inside the case's line range of the parent file;")
    print(" after fix = a finding inside the corresponding lines of the fixed file;")
    print(" lenient = found, or a finding inside the case's alt_lines: the bug's other side)")
    for selection in SELECTIONS:
        still = [r for r in results if r[f"{selection}_after_fix"]]
        print(f"\nstill reported after the fix ({selection}): {len(still)}")
        for r in still:
            print(f"  {r['id']} {r['fixed_lines']} {' '.join(r[f'{selection}_after_fix'])}")
    if verbose:
        print("\ncases:")
        for r in results:
            mark = "found" if r["default"] else ("all-only" if r["all"] else "missed")
            if mark == "missed" and (r.get("default_lenient") or r.get("all_lenient")):
                mark = "lenient"
            print(f"  {mark:<8} {r['id']} [{r['category']}] {' '.join(r['all'])}")
    if report["skipped"]:
        print(f"\nskipped: {len(report['skipped'])}")
        for case_id, why in report["skipped"]:
            print(f"  {case_id}: {why}")


if __name__ == "__main__":
    raise SystemExit(main())
