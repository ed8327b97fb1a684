"""The evidence file (``docs/evidence.json``) and the section it gives each rule's page.

``devlint confirm --json docs/evidence.json`` refreshes the file; it is
committed, so the generated docs (and the test that keeps them fresh) never
need to run the harness.
"""

from __future__ import annotations

import json
import platform
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from devlint import __version__
from devlint.harness.confirm import Evidence
from devlint.harness.words import counted

FIDELITY_NOT_RUN = (
    "Not yet confirmed on real CUDA: the fidelity check (`devlint confirm --backend both`, "
    "which runs every example on a GPU and on the emulator and reports any difference) "
    "has not been run on a machine with a GPU."
)


def write(path: Path, evidence: Sequence[Evidence]) -> None:
    """Merge ``evidence`` into the file: each (rule, example, backend) keeps its latest run."""
    fresh = [item.to_json() for item in evidence]
    keys = {(item["rule"], item["example"], item["backend"]) for item in fresh}
    kept = [
        item
        for item in load(path).get("results", [])
        if (item["rule"], item["example"], item["backend"]) not in keys
    ]
    examples = {name: index for index, name in enumerate(("bad.py", "good.py", "fixed.py"))}
    results = sorted(
        kept + fresh,
        key=lambda item: (item["rule"], examples.get(item["example"], 9), item["backend"]),
    )
    backends = {}
    for item in results:
        backends[item["backend"]] = {
            "gpus": max(item["gpus"], backends.get(item["backend"], {}).get("gpus", 0))
        }
    data = {
        "generated_by": "devlint confirm",
        "devlint": __version__,
        "torch": _torch_version(),
        "python": platform.python_version(),
        "platform": sys.platform,
        "backends": dict(sorted(backends.items())),
        "fidelity": _fidelity(results) if {"cuda", "emulated"} <= set(backends) else None,
        "results": results,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _fidelity(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Examples whose outcome differs between real CUDA and the emulator."""
    by_example: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for item in results:
        by_example.setdefault((item["rule"], item["example"]), {})[item["backend"]] = item
    differing = [
        {"rule": rule, "example": example, "cuda": runs["cuda"], "emulated": runs["emulated"]}
        for (rule, example), runs in by_example.items()
        if {"cuda", "emulated"} <= set(runs)
        and "skip" not in (runs["cuda"]["outcome"], runs["emulated"]["outcome"])
        and runs["cuda"]["outcome"] != runs["emulated"]["outcome"]
    ]
    return {"differences": differing}


def load(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def previous_seconds(data: dict[str, Any]) -> dict[tuple[str, str, str], float]:
    return {
        (item["rule"], item["example"], item["backend"]): float(item.get("seconds", 0.0))
        for item in data.get("results", [])
    }


def rule_section(code: str, data: dict[str, Any]) -> list[str]:
    """The ``## Evidence`` section of a rule's page, from the evidence file."""
    rows = [item for item in data.get("results", []) if item["rule"] == code]
    lines = ["## Evidence", ""]
    if not rows:
        return [
            *lines,
            "No harness evidence recorded for this rule yet: run "
            "`devlint confirm --json docs/evidence.json`, then `python scripts/generate_docs.py`.",
            "",
        ]
    backends = data.get("backends", {})
    lines += [
        f"`devlint confirm` ran the examples (torch {data.get('torch', '?')}):",
        "",
        "| Example | Backend | Outcome | What happened |",
        "| --- | --- | --- | --- |",
    ]
    for item in rows:
        gpus = counted(backends.get(item["backend"], {}).get("gpus", item.get("gpus")), "GPU")
        lines.append(
            f"| `{item['example']}` | {item['backend']} ({gpus}) | {item['outcome']} | "
            f"{_cell(item['observed'])} |"
        )
    lines.append("")
    return [*lines, _fidelity_line(code, rows, data), ""]


def _fidelity_line(code: str, rows: list[dict[str, Any]], data: dict[str, Any]) -> str:
    """Whether real CUDA confirmed this rule's examples, as the fidelity check found."""
    if "cuda" not in data.get("backends", {}):
        return FIDELITY_NOT_RUN
    on_cuda = [item for item in rows if item["backend"] == "cuda" and item["outcome"] != "skip"]
    if not on_cuda:
        gpus = counted(data["backends"]["cuda"]["gpus"], "GPU")
        return (
            f"Not confirmed on real CUDA: the fidelity check ran on a machine with {gpus}, "
            "and these examples need more."
        )
    differing = [
        item["example"]
        for item in (data.get("fidelity") or {}).get("differences", [])
        if item["rule"] == code
    ]
    if differing:
        return "Real CUDA and the emulator differ on " + ", ".join(f"`{e}`" for e in differing)
    return "Real CUDA and the emulator agree on every example run on both."


def _cell(text: str) -> str:
    text = text.replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    padding = " " if fence == "``" else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def _torch_version() -> str:
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "not installed"
