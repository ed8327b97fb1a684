"""``devlint check --format sarif``: SARIF 2.1.0 for GitHub code scanning and other viewers.

One run, whose driver lists every rule (and the three notices) with its
descriptions, help and documentation link. Each result names its rule, a
level, and one location: a URI relative to the repository root (the nearest
directory above the working directory that holds ``.git``; the working
directory itself when there is none) under the base id ``%SRCROOT%``, and a
region with 1-based lines and columns counted in code points (``columnKind``
says so). ``partialFingerprints.primaryLocationLineHash`` hashes the code and
the reported line's text without whitespace, plus its occurrence number, so
a finding keeps its identity when lines above it move.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from devlint import __version__
from devlint.diagnostic import Diagnostic, RelatedPlace, Severity
from devlint.inputs import decoding
from devlint.inputs.reading import read_regular_file
from devlint.notebooks.reading import NotebookError, file_lines, read_notebook
from devlint.notices import NOTICE_SUMMARIES
from devlint.rule_docs import USAGE_URL, docs_url, rule_sections, rule_text
from devlint.rules import all_rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = USAGE_URL
SRCROOT = "%SRCROOT%"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_PROBLEM_SEVERITY = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "recommendation",
}


def repository_root(start: Path | None = None) -> Path:
    """The nearest directory at or above ``start`` (default: cwd) with ``.git``; else ``start``."""
    start = Path(os.path.abspath(start or Path.cwd()))
    return next((path for path in (start, *start.parents) if (path / ".git").exists()), start)


def sarif_log(
    diagnostics: list[Diagnostic],
    root: Path,
    read_lines: Callable[[str], decoding.Lines | None] | None = None,
) -> dict[str, object]:
    """The SARIF log of one run. ``read_lines(path)`` gives a file's lines for fingerprints."""
    read_lines = read_lines or decoding.read_lines
    rules = _rule_descriptors()
    index = {rule["id"]: position for position, rule in enumerate(rules)}
    lines_of: dict[str, decoding.Lines | None] = {}
    shown_at: dict[str, dict[int, tuple[int, ...]]] = {}  # a notebook's file line per cell line
    occurrences: Counter[tuple[str, str]] = Counter()
    results = []
    for d in diagnostics:
        if d.path not in lines_of:
            lines_of[d.path] = read_lines(d.path)
        line_hash = _line_hash(d, (lines_of[d.path] or {}).get(d.cell))
        occurrences[(d.path, line_hash)] += 1
        if d.cell is not None and d.path not in shown_at:
            shown_at[d.path] = _file_lines_by_cell(d.path)
        result: dict[str, object] = {
            "ruleId": d.code,
            "level": LEVELS[d.severity],
            "message": {"text": d.message if d.cell is None else f"Cell {d.cell}: {d.message}"},
            "locations": [{"physicalLocation": _physical_location(d, root, shown_at)}],
            "partialFingerprints": {
                "primaryLocationLineHash": f"{line_hash}:{occurrences[(d.path, line_hash)]}"
            },
        }
        if d.related:
            result["relatedLocations"] = [
                _related_location(number, place, root) for number, place in enumerate(d.related)
            ]
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        if d.cell is not None:
            result["properties"] = {"cell": d.cell, "cellLine": d.line, "cellColumn": d.column + 1}
        results.append(result)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "devlint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "invocations": [{"executionSuccessful": True}],
                "originalUriBaseIds": {SRCROOT: {"uri": _directory_uri(root)}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def print_sarif(diagnostics: list[Diagnostic], root: Path | None = None) -> None:
    """Write the SARIF log of ``diagnostics`` to stdout."""
    json.dump(sarif_log(diagnostics, root or repository_root()), sys.stdout, indent=2)
    print()


def _rule_descriptors() -> list[dict[str, object]]:
    descriptors = []
    for rule in all_rules():
        meta = rule.meta
        sections = rule_sections(rule)
        full = " ".join(
            text for title in ("What it does", "Why is this bad?") if (text := sections.get(title))
        )
        url = docs_url(meta.code)
        descriptors.append(
            {
                "id": meta.code,
                "name": meta.name,
                "shortDescription": {"text": _sentence(meta.summary)},
                "fullDescription": {"text": full or _sentence(meta.summary)},
                "help": {
                    "text": f"{rule_text(rule)}\n\nDocumentation: {url}",
                    "markdown": f"{rule_text(rule)}\n\n[Documentation]({url})",
                },
                "helpUri": url,
                "defaultConfiguration": {
                    "enabled": meta.default_enabled,
                    "level": LEVELS[meta.severity],
                },
                "properties": {
                    "tags": ["pytorch", "device-placement", "correctness"],
                    "precision": "high",
                    "problem.severity": _PROBLEM_SEVERITY[meta.severity],
                    "fixable": meta.fixable,
                },
            }
        )
    for code, summary in NOTICE_SUMMARIES.items():
        descriptors.append(
            {
                "id": code,
                "name": "notice",
                "shortDescription": {"text": _sentence(summary)},
                "fullDescription": {
                    "text": f"{_sentence(summary)} A notice, not a rule: why devlint could not "
                    "analyse or fix the file."
                },
                "help": {"text": f"See {docs_url(code)}"},
                "helpUri": docs_url(code),
                "defaultConfiguration": {"enabled": True, "level": "error"},
                "properties": {"tags": ["devlint-notice"]},
            }
        )
    return descriptors


def _physical_location(
    d: Diagnostic, root: Path, shown_at: dict[str, dict[int, tuple[int, ...]]]
) -> dict[str, object]:
    region: dict[str, int] = {
        "startLine": d.line,
        "startColumn": d.column + 1,
        "endLine": d.end_line,
        "endColumn": d.end_column + 1,
    }
    if d.cell is not None:  # the notebook's JSON lines that show the cell's lines
        shown = shown_at[d.path].get(d.cell, ())
        start = shown[d.line - 1] if 0 < d.line <= len(shown) else 1
        end = shown[d.end_line - 1] if 0 < d.end_line <= len(shown) else start
        region = {"startLine": start, "endLine": max(start, end)}
    return {"artifactLocation": _artifact_location(d.path, root), "region": region}


def _file_lines_by_cell(path: str) -> dict[int, tuple[int, ...]]:
    """Each cell's source lines' lines in the notebook file; {} if it cannot be read now."""
    try:
        notebook = read_notebook(read_regular_file(path))
    except (OSError, NotebookError):
        return {}
    return file_lines(notebook)


def _related_location(number: int, place: RelatedPlace, root: Path) -> dict[str, object]:
    """Where in another file a value the message names came from."""
    return {
        "id": number,
        "physicalLocation": {
            "artifactLocation": _artifact_location(place.path, root),
            "region": {"startLine": place.line},
        },
        "message": {"text": "where a value the message names comes from"},
    }


def _artifact_location(path: str, root: Path) -> dict[str, str]:
    """A URI relative to ``root`` under ``%SRCROOT%``; an absolute one outside it. Both
    percent-encode the name's bytes, so a name that is not UTF-8 (``caf\\xe9.py``) is
    ``caf%E9.py``, as ``Path.as_uri`` writes it."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, root)
    if relative == os.curdir or relative.startswith(os.pardir) or os.path.isabs(relative):
        return {"uri": Path(absolute).as_uri()}
    return {"uri": quote(os.fsencode(Path(relative).as_posix())), "uriBaseId": SRCROOT}


def _directory_uri(root: Path) -> str:
    uri = Path(os.path.abspath(root)).as_uri()
    return uri if uri.endswith("/") else f"{uri}/"


def _line_hash(d: Diagnostic, lines: list[str] | None) -> str:
    """A hash of the code and the reported line's text, whitespace removed."""
    if lines is not None and 0 < d.line <= len(lines):
        anchor = "".join(lines[d.line - 1].split())
    else:
        anchor = d.message
    return hashlib.sha256(f"{d.code}\0{anchor}".encode()).hexdigest()[:16]


def _sentence(text: str) -> str:
    return f"{text[:1].upper()}{text[1:]}."
