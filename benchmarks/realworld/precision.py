"""devlint's precision on real projects: re-lint pinned commits, score findings against a ledger.

Usage::

    python benchmarks/realworld/precision.py --root /work/realworld [--extract]
        [--projects FILE] [--mirror /work/.mirror] [--jobs 1] [--only NAME ...]
        [--json OUT] [--write-untriaged OUT.jsonl]

``projects.json`` (beside this script; ``--projects`` names another list, such
as ``projects-34.json``, the projects first looked at in issue 34) pins each
project: ``repo``
(``owner/name``), ``commit`` (40 hex), optional ``paths`` (sub-paths to lint,
relative to the checkout; default the whole checkout) and ``lines`` (the
Python lines linted at that commit, as this script counts them).

The checkouts live in ``ROOT/<owner>+<name>/``. With ``--extract`` a missing
one is created from the bare mirror ``MIRROR/<owner>+<name>/repo`` (what the
``fetch`` tool or ``git clone --mirror`` gives): every ``*.py``, ``*.pyi``
and ``pyproject.toml`` blob of the pinned commit is written out (nothing
else is needed to lint; blobs the mirror lacks are skipped). A file
``.devlint-ledger-commit`` records the commit extracted; a checkout at another
commit is reported and not linted.

Each project is linted as a user would run devlint in it: the current
interpreter's ``devlint check --format json --no-cache --exit-zero --jobs N
PATHS`` with the checkout as working directory, so its own pyproject
``[tool.devlint]`` settings (none of the pinned projects has any today) and
the default rule selection apply. ``--no-cache`` keeps every run cold and
leaves no cache folder in the checkout.

Findings are keyed by ``(repo, path, code, text, occurrence)``: ``path`` is
relative to the checkout, ``text`` is the finding's first source line with
surrounding whitespace stripped, and ``occurrence`` counts (from 0, in line
and column order) the earlier findings with the same repo, path, code and
text. The key survives lines moving; it changes when the reported line
itself is edited (then the finding shows up as untriaged and the old entry
as no longer reported).

Notices (``DVL001``-``DVL004``: a file devlint could not parse, read or
analyse) are not rule findings: they are listed apart and left out of the
precision figure.

Precision is true / all rule findings, untriaged findings counted as false.
The script exits 0 whatever it finds; 2 only when the ledger is malformed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from checkouts import MARKER, mark_root, write_checkout

from devlint.notices import NOTICE_SUMMARIES
from devlint.project.files import iter_source_files

HERE = Path(__file__).resolve().parent
PROJECTS = HERE / "projects.json"
LEDGER = HERE / "ledger.jsonl"
VERDICTS = ("true", "debatable", "false")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    projects = json.loads(Path(args.projects).read_text())
    if args.only:
        wanted = set(args.only)
        projects = [p for p in projects if {p["repo"], _dirname(p["repo"])} & wanted]
    ledger = _read_ledger(LEDGER)
    root = Path(args.root)
    rows = []
    findings: list[dict] = []
    notices: list[dict] = []
    for project in projects:
        checkout = root / _dirname(project["repo"])
        problem = _prepare(project, checkout, Path(args.mirror), args.extract)
        if problem:
            print(f"{project['repo']}: {problem} (not linted)", file=sys.stderr)
            rows.append({"repo": project["repo"], "skipped": problem})
            continue
        started = time.perf_counter()
        reported = _lint(checkout, project.get("paths") or ["."], args.jobs)
        seconds = time.perf_counter() - started
        keyed = _keyed(project["repo"], checkout, reported)
        lines = _count_lines(checkout, project.get("paths") or ["."])
        rows.append(
            {
                "repo": project["repo"],
                "lines": lines,
                "findings": sum(1 for f in keyed if f["code"] not in NOTICE_SUMMARIES),
                "seconds": round(seconds, 1),
            }
        )
        if project.get("lines") not in (None, lines):
            print(
                f"{project['repo']}: {lines} lines linted, projects.json says {project['lines']}",
                file=sys.stderr,
            )
        for finding in keyed:
            (notices if finding["code"] in NOTICE_SUMMARIES else findings).append(finding)
    linted = {row["repo"] for row in rows if "skipped" not in row}
    report = _score(findings, ledger, linted)
    report["projects"] = rows
    report["notices"] = notices
    _print(report, rows, notices)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    if args.write_untriaged:
        with open(args.write_untriaged, "w") as out:
            for finding in report["untriaged"]:
                entry = dict(finding, verdict="", reason="", **{"class": ""})
                out.write(json.dumps(entry) + "\n")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", required=True, help="where the checkouts live")
    parser.add_argument(
        "--projects", default=str(PROJECTS), help="the projects (default: projects.json here)"
    )
    parser.add_argument(
        "--extract", action="store_true", help="create missing checkouts from the mirrors"
    )
    parser.add_argument(
        "--mirror", default="/work/.mirror", help="bare mirrors: MIRROR/<owner>+<name>/repo"
    )
    parser.add_argument("--jobs", type=int, default=1, help="devlint --jobs (default 1)")
    parser.add_argument("--only", nargs="*", help="lint only these repos (owner/name)")
    parser.add_argument("--json", help="also write the full report as JSON here")
    parser.add_argument(
        "--write-untriaged", help="write ledger skeletons for the untriaged findings here"
    )
    return parser


def _dirname(repo: str) -> str:
    return repo.replace("/", "+")


# checkouts -------------------------------------------------------------------


def _prepare(project: dict, checkout: Path, mirror: Path, extract: bool) -> str | None:
    """None when ``checkout`` holds the pinned commit, else why it cannot be linted."""
    marker = checkout / MARKER
    if marker.exists():
        found = marker.read_text().strip()
        if found != project["commit"]:
            return f"{checkout} holds {found}, not the pinned {project['commit']}"
        mark_root(checkout)
        return None
    if checkout.exists() and any(checkout.iterdir()):
        return None  # a checkout made some other way: trust it
    if not extract:
        return f"no checkout at {checkout}; run with --extract"
    gitdir = mirror / _dirname(project["repo"]) / "repo"
    if not gitdir.is_dir():
        return f"no mirror at {gitdir}"
    write_checkout(gitdir, project["commit"], checkout)
    return None


def _count_lines(checkout: Path, paths: list[str]) -> int:
    """Lines of the files devlint's own walk lints (every file, torch or not)."""
    total = 0
    for entry in iter_source_files(checkout / p for p in paths):
        if entry.skip_reason is None:
            with open(entry.path, "rb") as handle:
                total += sum(1 for _ in handle)
    return total


# linting ---------------------------------------------------------------------


def _lint(checkout: Path, paths: list[str], jobs: int) -> list[dict]:
    command = [sys.executable, "-m", "devlint", "check", "--format", "json", "--no-cache"]
    command += ["--exit-zero", "--jobs", str(jobs), *paths]
    done = subprocess.run(command, cwd=checkout, capture_output=True, text=True)
    if done.returncode != 0:
        tail = done.stderr[-2000:]
        print(f"{checkout}: devlint exited {done.returncode}: {tail}", file=sys.stderr)
        return []
    return json.loads(done.stdout)


def _keyed(repo: str, checkout: Path, reported: list[dict]) -> list[dict]:
    """Each finding with its stable key fields, in path, line, column order."""
    lines_of: dict[str, list[str]] = {}
    seen: Counter[tuple[str, str, str]] = Counter()
    out = []
    for finding in sorted(reported, key=lambda f: (f["path"], f["line"], f["column"], f["code"])):
        path = os.path.normpath(finding["path"]).replace(os.sep, "/")
        if path not in lines_of:
            try:
                text = (checkout / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            lines_of[path] = text.splitlines()
        source = lines_of[path]
        text = source[finding["line"] - 1].strip() if 0 < finding["line"] <= len(source) else ""
        occurrence = seen[(path, finding["code"], text)]
        seen[(path, finding["code"], text)] += 1
        out.append(
            {
                "repo": repo,
                "path": path,
                "code": finding["code"],
                "text": text,
                "occurrence": occurrence,
                "line": finding["line"],
                "message": finding["message"],
            }
        )
    return out


def _key(entry: dict) -> tuple[str, str, str, str, int]:
    return (entry["repo"], entry["path"], entry["code"], entry["text"], entry["occurrence"])


# scoring ---------------------------------------------------------------------


def _read_ledger(path: Path) -> dict[tuple, dict]:
    ledger: dict[tuple, dict] = {}
    if not path.exists():
        return ledger
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        entry = json.loads(line)
        if entry.get("verdict") not in VERDICTS:
            _malformed(f"{path}:{number}: verdict must be one of {VERDICTS}")
        if _key(entry) in ledger:
            _malformed(f"{path}:{number}: duplicate key {_key(entry)}")
        ledger[_key(entry)] = entry
    return ledger


def _malformed(problem: str) -> None:
    print(problem, file=sys.stderr)
    raise SystemExit(2)


def _score(findings: list[dict], ledger: dict[tuple, dict], linted: set[str]) -> dict:
    by_code: dict[str, Counter[str]] = defaultdict(Counter)
    fp_classes: Counter[str] = Counter()
    untriaged = []
    false_still = []
    for finding in findings:
        entry = ledger.get(_key(finding))
        verdict = entry["verdict"] if entry else "untriaged"
        finding["verdict"] = verdict
        by_code[finding["code"]][verdict] += 1
        by_code["all"][verdict] += 1
        if entry is None:
            untriaged.append(finding)
        elif verdict == "false":
            false_still.append(finding)
            fp_classes[entry.get("class") or "(no class)"] += 1
    reported = {_key(f) for f in findings}
    lost = [
        entry for key, entry in ledger.items() if key not in reported and entry["repo"] in linted
    ]
    table = {}
    for code, counts in sorted(by_code.items(), key=lambda item: (item[0] == "all", item[0])):
        total = sum(counts.values())
        table[code] = {
            "findings": total,
            **{v: counts[v] for v in (*VERDICTS, "untriaged")},
            "precision": counts["true"] / total if total else None,
        }
    return {
        "table": table,
        "false_positive_classes": dict(fp_classes.most_common()),
        "untriaged": untriaged,
        "false_still_reported": false_still,
        "no_longer_reported": lost,
    }


def _print(report: dict, rows: list[dict], notices: list[dict]) -> None:
    print(f"{'project':<40} {'lines':>8} {'findings':>8} {'seconds':>8}")
    for row in rows:
        if "skipped" in row:
            print(f"{row['repo']:<40} skipped: {row['skipped']}")
        else:
            print(f"{row['repo']:<40} {row['lines']:>8} {row['findings']:>8} {row['seconds']:>8}")
    lines = sum(row.get("lines", 0) for row in rows)
    print(f"{'total':<40} {lines:>8} {sum(row.get('findings', 0) for row in rows):>8}")
    print()
    header = f"{'code':<8} {'findings':>8} {'true':>6} {'debat.':>6} {'false':>6} {'untri.':>6}"
    print(header + f" {'precision':>9}")
    for code, row in report["table"].items():
        precision = "-" if row["precision"] is None else f"{row['precision']:.0%}"
        print(
            f"{code:<8} {row['findings']:>8} {row['true']:>6} {row['debatable']:>6} "
            f"{row['false']:>6} {row['untriaged']:>6} {precision:>9}"
        )
    print("(precision = true / findings; untriaged findings count as false)")
    if report["false_positive_classes"]:
        print("\nfalse-positive classes still reported:")
        for name, count in report["false_positive_classes"].items():
            print(f"  {count:>4}  {name}")
    _list("known false positives still reported", report["false_still_reported"])
    lost = report["no_longer_reported"]
    lost_true = [e for e in lost if e["verdict"] == "true"]
    _list("TRUE findings no longer reported", lost_true)
    _list("other ledger entries no longer reported", [e for e in lost if e["verdict"] != "true"])
    _list("untriaged findings (triage them before trusting the figure)", report["untriaged"])
    _list("notices (files not analysed; not counted)", notices)


def _list(title: str, entries: list[dict]) -> None:
    print(f"\n{title}: {len(entries)}")
    for e in entries:
        where = f"{e['repo']}:{e['path']}" + (f":{e['line']}" if "line" in e else "")
        print(f"  {where} {e['code']} [{e.get('verdict', '')}] {e['text'][:80]}")


if __name__ == "__main__":
    raise SystemExit(main())
