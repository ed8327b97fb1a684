"""What one process of a harness run writes when it ends, and how a run's reports combine.

Each process (the example, and any Python it starts) writes ``<pid>.json`` into
the run's report folder. The parent process of the example is the ``main``
report; a failure in a child (a re-executed script) is still the run's failure.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devlint.harness.observe import symptoms


@dataclass
class ProcessReport:
    pid: int
    main: bool
    exception: dict[str, Any] | None = None
    exit_status: int | None = None
    transfers: list[dict[str, Any]] = field(default_factory=list)
    created_then_moved: list[dict[str, Any]] = field(default_factory=list)
    device_errors: list[dict[str, Any]] = field(default_factory=list)

    def write(self, folder: str | os.PathLike[str]) -> None:
        """Write ``<pid>.json`` whole (temporary file, then rename), or nothing.

        A process can outlive its run (a helper or daemon the program left behind):
        by the time it ends, the run's folder is gone and nobody reads its report.
        The harness's own file must never become the program's error.
        """
        path = Path(folder) / f"{self.pid}.json"
        temporary = path.with_suffix(".tmp")
        try:
            temporary.write_text(json.dumps(self.__dict__), encoding="utf-8")
            temporary.replace(path)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()


def read_reports(folder: str | os.PathLike[str]) -> list[ProcessReport]:
    """Every process report of a run, the main one first."""
    reports = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            reports.append(ProcessReport(**json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError, TypeError):
            continue
    return sorted(reports, key=lambda report: (not report.main, report.pid))


@dataclass
class RunReport:
    """A whole run: its failure, its device errors, transfers and measured symptoms."""

    exception: dict[str, Any] | None
    device_errors: list[dict[str, Any]]
    transfers: list[dict[str, Any]]
    symptoms: list[str]


def combine(reports: list[ProcessReport]) -> RunReport:
    exception = next((report.exception for report in reports if report.exception), None)
    main = next((report for report in reports if report.main), None)
    if main is not None and main.exception:
        exception = main.exception
    return RunReport(
        exception=exception,
        device_errors=[error for report in reports for error in report.device_errors],
        transfers=_merge((report.transfers for report in reports), ("kind", "file", "line")),
        symptoms=symptoms(
            _merge((report.created_then_moved for report in reports), ("file", "line"))
        ),
    )


def _merge(groups: Iterable[list[dict[str, Any]]], keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """The processes' entries with the same ``keys`` (a kind, a place) as one: counts and bytes
    added up."""
    merged: dict[tuple[Any, ...], list[int]] = {}
    for group in groups:
        for entry in group:
            counts = merged.setdefault(tuple(entry[key] for key in keys), [0, 0])
            counts[0] += entry["count"]
            counts[1] += entry["bytes"]
    return [
        {**dict(zip(keys, key, strict=True)), "count": count, "bytes": size}
        for key, (count, size) in sorted(merged.items())
    ]
