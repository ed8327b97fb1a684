"""devlint's recall on hand-made device bugs written into real files (issue 34).

Usage::

    python benchmarks/realworld/mutation/handmade.py --root /work/realworld-handmade [--extract]
        [--manifest FILE] [--mirror /work/.mirror] [--only ID_OR_REPO ...] [--json OUT] [--verbose]

``handmade.json`` (beside this script) lists the mutants. Each names ``id``,
``repo`` (``owner/name``), ``commit`` (the pinned commit), ``path`` (the file
mutated), ``find`` (original text, exactly once in the file), ``replace`` (what
it becomes), ``lines`` (``[start, end]`` in the *mutated* file: where the
misplaced value meets the other device, where a linter should report),
``kind``, ``one_file`` (whether that meeting and both devices can be told from
the mutated file alone) and ``why``. Optional: ``alt_lines`` (another place in
the mutated file that points at the bug, counted apart as *lenient*, as is the
mutated text itself).

The trees live in ``ROOT/<owner>+<name>@<commit>/`` (every ``*.py``, ``*.pyi``
and ``pyproject.toml``, as ``checkouts.write_checkout`` writes them; with
``--extract`` a missing tree is written from the bare mirror
``MIRROR/<owner>+<name>/repo``). For each mutant the file is rewritten in its
tree, linted as a user would lint it there (``devlint check --format json
--no-cache --exit-zero --jobs 1 --no-respect-gitignore FILE``, once with the
default rules and once with ``--select DVL``) and restored. A mutant is
*detected* when a rule finding (not a notice, ``DVL001``-``DVL006``) starts
inside ``lines``. Each original file is linted once the same way: a finding
inside the original lines that correspond to ``lines`` means the site was
reported before the mutation (*pre*); those mutants are listed apart.

Prints recall overall, on the one-file mutants and on those whose other side is
in another file, and by kind, for both selections. Exit status 0, or 2 when the
manifest is malformed, a tree cannot be made or a ``find`` does not match once.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from devlint.notices import NOTICE_SUMMARIES

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # checkouts.py
from checkouts import MARKER, mark_root, write_checkout

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "handmade.json"
REQUIRED = ("id", "repo", "commit", "path", "find", "replace", "lines", "kind", "one_file", "why")
SELECTIONS = {"default": [], "all": ["--select", "DVL"]}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    cases = _read_cases(Path(args.manifest))
    if args.only:
        wanted = set(args.only)
        cases = [c for c in cases if {c["id"], c["repo"], _dirname(c["repo"])} & wanted]
    root, mirror = Path(args.root), Path(args.mirror)
    problems: dict[str, str] = {}
    for tree, case in {_tree(root, c): c for c in cases}.items():
        problem = _prepare(tree, case["commit"], mirror / _dirname(case["repo"]), args.extract)
        if problem:
            problems.update({c["id"]: problem for c in cases if _tree(root, c) == tree})
    originals: dict[tuple[Path, str], dict[str, list[dict]]] = {}  # (tree, path) -> selection
    rows = []
    for case in cases:
        if case["id"] in problems:
            continue
        tree = _tree(root, case)
        target = tree / case["path"]
        if not target.is_file():
            problems[case["id"]] = f"{case['path']} missing in {tree}"
            continue
        source = target.read_bytes()
        text = source.decode("utf-8")
        if "\r\n" in text:  # Windows line ends: the manifest writes its text with \n
            crlf = {k: case[k].replace("\n", "\r\n") for k in ("find", "replace")}
            case = {**case, **crlf}
        if text.count(case["find"]) != 1:
            problems[case["id"]] = f"find occurs {text.count(case['find'])} times in {case['path']}"
            continue
        if (tree, case["path"]) not in originals:
            originals[tree, case["path"]] = _lint_both(tree, case["path"])
        try:
            target.write_text(text.replace(case["find"], case["replace"]), encoding="utf-8")
            mutated = _lint_both(tree, case["path"])
        finally:
            target.write_bytes(source)
        rows.append(_row(case, text, mutated, originals[tree, case["path"]]))
    report = {"cases": rows, "skipped": problems, "summary": _summary(rows)}
    _print(report, args.verbose)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 2 if problems else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", required=True, help="where the extracted trees live")
    parser.add_argument("--manifest", default=str(MANIFEST), help="default: handmade.json here")
    parser.add_argument("--extract", action="store_true", help="write missing trees from mirrors")
    parser.add_argument("--mirror", default="/work/.mirror", help="MIRROR/<owner>+<name>/repo")
    parser.add_argument("--only", nargs="*", help="these mutant ids or repositories only")
    parser.add_argument("--json", help="also write the full report as JSON here")
    parser.add_argument("--verbose", action="store_true", help="list every mutant")
    return parser


def _dirname(repo: str) -> str:
    return repo.replace("/", "+")


def _tree(root: Path, case: dict) -> Path:
    return root / f"{_dirname(case['repo'])}@{case['commit']}"


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
        for key in ("lines", "alt_lines"):
            lines = case.get(key, [1, 1])
            if not (isinstance(lines, list) and len(lines) == 2 and 0 < lines[0] <= lines[1]):
                _malformed(f"{path}: {case['id']}: {key} must be [start, end]")
        if len(case["commit"]) != 40 or case["id"] in seen:
            _malformed(f"{path}: {case['id']}: a full commit hash and a unique id are needed")
        seen.add(case["id"])
    return cases


def _malformed(problem: str) -> None:
    print(problem, file=sys.stderr)
    raise SystemExit(2)


def _prepare(tree: Path, commit: str, mirror: Path, extract: bool) -> str | None:
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
    gitdir = mirror / "repo"
    if (gitdir / ".git").is_dir():  # a snapshot fetched as a clone, not a bare mirror
        gitdir = gitdir / ".git"
    if not gitdir.is_dir():
        return f"no mirror at {gitdir}"
    write_checkout(gitdir, commit, tree)
    return None


def _lint_both(tree: Path, path: str) -> dict[str, list[dict]]:
    return {selection: _lint(tree, path, flags) for selection, flags in SELECTIONS.items()}


def _lint(tree: Path, path: str, flags: list[str]) -> list[dict]:
    command = [sys.executable, "-m", "devlint", "check", "--format", "json", "--no-cache"]
    command += ["--exit-zero", "--jobs", "1", "--no-respect-gitignore", *flags, "--", path]
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"{tree}: devlint exited {done.returncode}: {done.stderr[-2000:]}", file=sys.stderr)
        return []
    findings = json.loads(done.stdout)
    for notice in (f for f in findings if f["code"] in NOTICE_SUMMARIES):
        print(f"{tree.name}/{path}: {notice['code']} {notice['message']}", file=sys.stderr)
    return [f for f in findings if f["code"] not in NOTICE_SUMMARIES]


def _row(case: dict, text: str, mutated: dict, original: dict) -> dict:
    """One mutant's findings: in ``lines``, at the mutated text or ``alt_lines`` (lenient),
    and in the original file's corresponding lines (pre)."""
    first = text.count("\n", 0, text.index(case["find"])) + 1
    old, new = case["find"].count("\n"), case["replace"].count("\n")

    def to_original(line: int, end: bool) -> int:
        if line < first:
            return line
        if line >= first + new:  # after the mutated text: shifted by the lines it gained
            return line - new + old
        return first + case["find"].rstrip("\n").count("\n") if end else first

    start, stop = case["lines"]
    before = [to_original(start, False), to_original(stop, True)]
    lenient = [case["alt_lines"]] if "alt_lines" in case else []
    if case["replace"].strip():
        lenient.append([first, first + case["replace"].rstrip("\n").count("\n")])
    row = {k: case[k] for k in ("id", "repo", "path", "kind", "one_file", "lines")}
    row["original_lines"] = before
    for selection, findings in mutated.items():
        row[selection] = _inside(findings, *case["lines"])
        row[f"{selection}_lenient"] = [h for span in lenient for h in _inside(findings, *span)]
        row[f"{selection}_pre"] = _inside(original[selection], *before)
    return row


def _inside(findings: list[dict], start: int, end: int) -> list[str]:
    return [f"{f['code']}@{f['line']}" for f in findings if start <= f["line"] <= end]


def _summary(rows: list[dict]) -> dict:
    summary: dict = {}
    for selection in SELECTIONS:
        groups: dict[str, list[dict]] = defaultdict(list)
        for row in rows:
            groups["all mutants"].append(row)
            side = "one-file" if row["one_file"] else "another file"
            groups[side].append(row)
            groups[f"kind: {row['kind']}"].append(row)
        summary[selection] = {
            name: {
                "mutants": len(members),
                "detected": sum(1 for r in members if r[selection]),
                "lenient": sum(1 for r in members if r[selection] or r[f"{selection}_lenient"]),
                "pre": sum(1 for r in members if r[f"{selection}_pre"]),
            }
            for name, members in groups.items()
        }
    return summary


def _print(report: dict, verbose: bool) -> None:
    rows = report["cases"]
    for selection in SELECTIONS:
        table = report["summary"][selection]
        print("default rules:" if selection == "default" else "all rules (--select DVL):")
        print(f"  {'':<40} {'mutants':>7} {'detected':>8} {'recall':>6} {'lenient':>7} {'pre':>4}")
        kinds = sorted(k for k in table if k.startswith("kind: "))
        for name in ["all mutants", "one-file", "another file", *kinds]:
            if name in table:
                t = table[name]
                recall = f"{t['detected'] / t['mutants']:.0%}"
                print(
                    f"  {name:<40} {t['mutants']:>7} {t['detected']:>8} {recall:>6}"
                    f" {t['lenient']:>7} {t['pre']:>4}"
                )
        print()
    print("(detected = a rule finding inside the mutant's lines; lenient = detected, or a finding")
    print(" on the mutated text or alt_lines; pre = a finding in the corresponding lines of the")
    print(" original file, before the mutation)")
    for selection in SELECTIONS:
        pre = [r for r in rows if r[f"{selection}_pre"]]
        print(f"\nalready reported on the original ({selection}): {len(pre)}")
        for r in pre:
            print(f"  {r['id']} {r['original_lines']} {' '.join(r[f'{selection}_pre'])}")
    if verbose:
        print("\nmutants (D: default rules, a: --select DVL only, l: lenient only, -: missed):")
        for r in rows:
            mark = "D" if r["default"] else "a" if r["all"] else "-"
            if mark == "-" and (r["default_lenient"] or r["all_lenient"]):
                mark = "l"
            found = " ".join(r["all"] or r["all_lenient"])
            side = "one-file" if r["one_file"] else "another"
            print(f"  {mark} {r['id']} [{r['kind']}, {side}] {r['lines']} {found}")
    if report["skipped"]:
        print(f"\nskipped: {len(report['skipped'])}")
        for case_id, why in report["skipped"].items():
            print(f"  {case_id}: {why}")


if __name__ == "__main__":
    raise SystemExit(main())
