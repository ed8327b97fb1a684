"""devlint's mutation recall: device bugs injected into correct real files, kept when they fail.

Usage::

    python benchmarks/realworld/mutation/score.py --root /work/realworld-mutation [--extract]
        [--mirror /work/.mirror] [--only ID ...] [--workers 2] [--timeout 120]
        [--json OUT] [--verbose]

``sources.json`` (beside this script) pins each source: ``id``, ``repo``, ``commit``,
``files`` (the files to mutate, relative to the repository root), ``driver`` (the script
that runs their code on tiny synthetic inputs, in ``drivers/``) and ``gpus`` (the emulated
GPUs it runs with). Checkouts live in ``ROOT/<owner>+<name>/`` (``--extract`` writes a
missing one from ``MIRROR/<owner>+<name>/repo``, as the other real-world benchmarks do).

For each file, ``inject.py`` makes one mutant per site of every kind. ``validate.py`` runs
the driver on the original (it must pass) and on each mutant on devlint's emulated CUDA; a
mutant is *kept* when it fails with a device error. Each kept mutant is linted in its own
copy of the repository tree, with the default rules and with every rule (``--select DVL``),
and is *detected* when a rule finding that the original file does not have starts on one of
its *right lines*: the lines of the mutated code, and the lines of the mutated file on the
failure's stack (the call chain to where the misplaced value met the other device).

Prints, per source and per kind: sites, kept, detected (default / all rules) and recall;
then the overall recall. Exits 0 whatever it finds; 2 when a source's original does not run clean.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # checkouts.py
sys.path.insert(0, str(HERE))

import validate  # noqa: E402
from checkouts import MARKER, mark_root, write_checkout  # noqa: E402
from inject import KINDS, Mutant, mutants  # noqa: E402

from devlint.notices import NOTICE_SUMMARIES  # noqa: E402

SOURCES = HERE / "sources.json"
SELECTIONS = {"default": [], "all": ["--select", "DVL"]}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    sources = json.loads(SOURCES.read_text())
    if args.only:
        sources = [s for s in sources if s["id"] in set(args.only)]
    root = Path(args.root)
    work = root / ".mutants"
    cache = root / "mutation-cache.jsonl"
    requests, cases, originals = [], [], {}
    for source in sources:
        checkout = root / source["repo"].replace("/", "+")
        problem = _prepare(source, checkout, Path(args.mirror), args.extract)
        if problem:
            print(f"{source['id']}: {problem} (skipped)", file=sys.stderr)
            continue
        for path in source["files"]:
            original = validate.original_request(work, source, checkout, path)
            originals[(source["id"], path)] = original
            requests.append(original)
            for mutant in mutants((checkout / path).read_text(encoding="utf-8")):
                request = validate.mutant_request(work, source, checkout, path, mutant)
                requests.append(request)
                cases.append((source, path, mutant, request))
    print(f"{len(cases)} mutants of {len(originals)} files; running what the cache lacks")
    outcomes = validate.run(requests, cache, args.workers, args.timeout)
    broken = [
        (key, outcomes[request[0]])
        for key, request in originals.items()
        if outcomes[request[0]].status != "pass"
    ]
    for (source_id, path), outcome in broken:
        print(f"ORIGINAL FAILS: {source_id} {path}: {outcome.status} {outcome.error}")
    broken_files = {key for key, _ in broken}
    kept = [
        (source, path, mutant, request)
        for source, path, mutant, request in cases
        if (source["id"], path) not in broken_files
        and outcomes[request[0]].status == "device-error"
    ]
    findings = _lint(work, kept, originals)
    rows = []
    for source, path, mutant, request in cases:
        outcome = outcomes[request[0]]
        row = {
            "source": source["id"],
            "path": path,
            "kind": mutant.kind,
            "site": mutant.site,
            "lines": list(mutant.lines),
            "before": mutant.before,
            "after": mutant.after,
            "status": outcome.status if (source["id"], path) not in broken_files else "no-original",
            "error": outcome.error,
            "failure_lines": outcome.lines,
        }
        if row["status"] == "device-error":
            right = _right_lines(mutant, outcome.lines)
            row["right_lines"] = sorted(right)
            for selection in SELECTIONS:
                hits = _new_hits(findings, selection, request[2], path, originals, source, right)
                row[selection] = [f"{f['code']}@{f['line']}" for f in hits]
        rows.append(row)
    summary = _summary(rows)
    _print(summary, rows, args.verbose)
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "mutants": rows}, indent=1))
    return 2 if broken else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", required=True, help="where the checkouts live")
    parser.add_argument("--extract", action="store_true", help="create missing checkouts")
    parser.add_argument(
        "--mirror", default="/work/.mirror", help="bare mirrors: MIRROR/<owner>+<name>/repo"
    )
    parser.add_argument("--only", nargs="*", help="only these source ids")
    parser.add_argument("--workers", type=int, default=2, help="drivers run at once (default 2)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per run")
    parser.add_argument("--json", help="also write every mutant's row as JSON here")
    parser.add_argument("--verbose", action="store_true", help="list every kept mutant")
    return parser


def _prepare(source: dict, checkout: Path, mirror: Path, extract: bool) -> str | None:
    marker = checkout / MARKER
    if marker.exists():
        found = marker.read_text().strip()
        if found != source["commit"]:
            return f"{checkout} holds {found}"
        mark_root(checkout)
        return None
    if not extract:
        return f"no checkout at {checkout}; run with --extract"
    gitdir = mirror / source["repo"].replace("/", "+") / "repo"
    if not gitdir.is_dir():
        return f"no mirror at {gitdir}"
    write_checkout(gitdir, source["commit"], checkout)
    return None


def _right_lines(mutant: Mutant, failure_lines: list[int]) -> set[int]:
    """The mutated code's lines and the file's lines on the failure's stack."""
    start, end = mutant.lines
    return set(range(start, end + 1)) | set(failure_lines)


# linting -------------------------------------------------------------------------------------


def _lint(work: Path, kept: list, originals: dict) -> dict:
    """``(selection, file) -> rule findings`` for every kept mutant and the originals."""
    files = {str(request[2] / path) for _source, path, _mutant, request in kept}
    files |= {str(request[2] / key[1]) for key, request in originals.items()}
    found: dict = defaultdict(list)
    for selection, flags in SELECTIONS.items():
        command = [sys.executable, "-m", "devlint", "check", "--format", "json", "--no-cache"]
        command += ["--exit-zero", "--jobs", "1", *flags, *sorted(files)]
        done = subprocess.run(command, cwd=work, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"devlint exited {done.returncode}: {done.stderr[-2000:]}", file=sys.stderr)
            continue
        for finding in json.loads(done.stdout):
            if finding["code"] not in NOTICE_SUMMARIES:
                path = str((work / finding["path"]).resolve())
                found[(selection, path)].append(finding)
    return found


def _new_hits(findings, selection, tree, path, originals, source, right) -> list[dict]:
    """Findings on the right lines that the original file does not have at the same place."""
    mutant_findings = findings.get((selection, str((tree / path).resolve())), [])
    original_tree = originals[(source["id"], path)][2]
    before = {
        (f["code"], f["line"])
        for f in findings.get((selection, str((original_tree / path).resolve())), [])
    }
    return [
        f for f in mutant_findings if f["line"] in right and (f["code"], f["line"]) not in before
    ]


# report --------------------------------------------------------------------------------------


def _summary(rows: list[dict]) -> dict:
    by_kind: dict[str, Counter] = defaultdict(Counter)
    by_source: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        for counts in (by_kind[row["kind"]], by_kind["all"], by_source[row["source"]]):
            counts["sites"] += 1
            counts[row["status"]] += 1
            if row["status"] == "device-error":
                counts["kept"] += 1
                for selection in SELECTIONS:
                    counts[selection] += bool(row[selection])
    files = {(row["source"], row["path"]) for row in rows if row["status"] == "device-error"}
    return {
        "sources": {source: dict(counts) for source, counts in by_source.items()},
        "kinds": {k: dict(by_kind[k]) for k in (*KINDS, "all") if k in by_kind},
        "files_with_kept": len(files),
        "sources_with_kept": len({source for source, _ in files}),
    }


def _print(summary: dict, rows: list[dict], verbose: bool) -> None:
    _table("source", summary["sources"])
    print()
    _table("kind", summary["kinds"])
    total = summary["kinds"].get("all", {})
    print(
        f"\nmutation recall (default rules): {total.get('default', 0)}/{total.get('kept', 0)}"
        f" = {_pct(total.get('default', 0), total.get('kept', 0))}; all rules:"
        f" {total.get('all', 0)}/{total.get('kept', 0)} = "
        f"{_pct(total.get('all', 0), total.get('kept', 0))}"
        f" ({summary['files_with_kept']} files, {summary['sources_with_kept']} sources)"
    )
    if verbose:
        print("\nkept mutants:")
        for row in rows:
            if row["status"] != "device-error":
                continue
            mark = "D" if row["default"] else ("a" if row["all"] else "-")
            print(
                f" {mark} {row['source']}:{row['path']}:{row['lines'][0]} {row['kind']}"
                f" {row['before'][:50]!r} -> {row['after'][:40]!r}"
                f" failed@{row['failure_lines']} found={row['all']}"
            )


def _table(title: str, counts_by_name: dict[str, dict]) -> None:
    header = f"{title:<32} {'sites':>5} {'kept':>5} {'other':>5} {'pass':>5} {'t/o':>4}"
    print(header + f" {'default':>8} {'all':>8}")
    for name, c in counts_by_name.items():
        cells = [f"{c.get('default', 0):>3} {_pct(c.get('default', 0), c.get('kept', 0)):>4}"]
        cells.append(f"{c.get('all', 0):>3} {_pct(c.get('all', 0), c.get('kept', 0)):>4}")
        print(
            f"{name:<32} {c['sites']:>5} {c.get('kept', 0):>5} {c.get('other-error', 0):>5} "
            f"{c.get('pass', 0):>5} {c.get('timeout', 0):>4} {cells[0]:>8} {cells[1]:>8}"
        )


def _pct(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "-"


if __name__ == "__main__":
    raise SystemExit(main())
