"""Writes docs/rules/<CODE>.md and the README's rule table from the rules themselves, and
the table of JSON output fields in docs/usage.md from ``devlint.diagnostic.JSON_FIELDS``.

Run ``python scripts/generate_docs.py`` after changing a rule; ``--check``
exits 1 when the committed docs are stale (the test suite runs it).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devlint.diagnostic import JSON_FIELDS, JsonField  # noqa: E402
from devlint.harness.evidence import load as load_evidence  # noqa: E402
from devlint.harness.evidence import rule_section  # noqa: E402
from devlint.rule import Rule  # noqa: E402
from devlint.rule_docs import page_lines  # noqa: E402
from devlint.rules import all_rules  # noqa: E402

RULES_TABLE = "rules-table"
JSON_FIELDS_TABLE = "json-fields"
"""Names of the generated parts: each lies between ``<!-- NAME:start -->`` and
``<!-- NAME:end -->`` in its document."""
EVIDENCE = ROOT / "docs" / "evidence.json"
"""Committed harness evidence, refreshed by ``devlint confirm --json docs/evidence.json``."""


def rule_doc(rule: type[Rule]) -> str:
    """The Markdown page of one rule: ``devlint rule``'s page and the harness evidence."""
    return "\n".join([*page_lines(rule), *rule_section(rule.meta.code, load_evidence(EVIDENCE))])


def rules_table() -> str:
    rows = ["| Code | Name | Severity | What it finds |", "| --- | --- | --- | --- |"]
    for rule in all_rules():
        meta = rule.meta
        rows.append(
            f"| [{meta.code}](docs/rules/{meta.code}.md) | {meta.name} | "
            f"{meta.severity.value} | {meta.summary} |"
        )
    return "\n".join(rows)


def json_fields_table() -> str:
    """One row per field of ``--format json``'s objects; an array's items as ``name[].item``."""
    rows = ["| Field | Type | Always there | Meaning |", "| --- | --- | --- | --- |"]

    def add(fields: tuple[JsonField, ...], prefix: str) -> None:
        for spec in fields:
            always = "yes" if spec.always else "no"
            rows.append(f"| `{prefix}{spec.name}` | {spec.type} | {always} | {spec.meaning} |")
            add(spec.items, f"{prefix}{spec.name}[].")

    add(JSON_FIELDS, "")
    return "\n".join(rows)


def with_generated(path: Path, name: str, body: str) -> str:
    """The text of ``path`` with the part between its ``name`` markers replaced by ``body``."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
    if pattern.search(text) is None:
        raise SystemExit(f"{path.relative_to(ROOT)} has no {start} … {end} markers")
    return pattern.sub(lambda _: f"{start}\n{body}\n{end}", text)


def expected_files() -> dict[Path, str]:
    files = {
        ROOT / "docs" / "rules" / f"{rule.meta.code}.md": rule_doc(rule) for rule in all_rules()
    }
    readme, usage = ROOT / "README.md", ROOT / "docs" / "usage.md"
    files[readme] = with_generated(readme, RULES_TABLE, rules_table())
    files[usage] = with_generated(usage, JSON_FIELDS_TABLE, json_fields_table())
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when docs are stale")
    check = parser.parse_args().check
    stale = []
    for path, text in expected_files().items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            stale.append(path.relative_to(ROOT))
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    if check and stale:
        print("stale: " + ", ".join(map(str, stale)) + " — run python scripts/generate_docs.py")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
