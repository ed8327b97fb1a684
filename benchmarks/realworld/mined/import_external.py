"""Write ``external.json`` (the mined-bug manifest's format) from ``mined-external.toml``.

The 65 cases of a second, independent benchmark (issue 34) are given as TOML in the
workplace's shared folder; this keeps them beside ``bugs.json`` as references only
(repository, commits, path, lines), scored with ``score.py --manifest external.json``.
Run again only if the TOML changes::

    python benchmarks/realworld/mined/import_external.py ../shared/mined-external.toml
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent


def convert(case: dict) -> dict:
    converted = {
        "id": case["id"],
        "repo": case["repo"],
        "fix": case["sha"],
        "parent": case["parent"],
        "path": case["path"],
        "lines": case["lines"],
        "category": case["category"],
        "one_file": case["intra_file"],
        "evidence": case["description"],
        "runtime": case["runtime"],
    }
    if "post_path" in case:
        converted["fixed_path"] = case["post_path"]
    if "alt_lines" in case:
        converted["alt_lines"] = case["alt_lines"]
    return converted


def main(argv: list[str]) -> int:
    source = Path(argv[0]) if argv else HERE.parents[3] / "shared" / "mined-external.toml"
    cases = tomllib.loads(source.read_text(encoding="utf-8"))["case"]
    out = HERE / "external.json"
    out.write_text(json.dumps([convert(case) for case in cases], indent=1) + "\n")
    print(f"{out}: {len(cases)} cases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
