"""What one process of a harness run writes when it ends, and how a run's reports combine.

Each process (the example, and any Python it starts) writes ``<pid>.json`` into
the run's report folder. The parent process of the example is the ``main``
report; a failure in a child (a re-executed script) is still the run's failure.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class ProcessReport:
    pid: int
    main: bool
    exception: dict[str, Any] | None = None
    exit_status: int | None = None
    transfers: list[dict[str, Any]] = field(default_factory=list)
    created_then_moved: list[dict[str, Any]] = field(default_factory=list)
    device_errors: list[dict[str, Any]] = field(default_factory=list)
    symptoms: list[str] = field(default_factory=list)

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
        transfers=_merge_transfers(report.transfers for report in reports),
        symptoms=[symptom for report in reports for symptom in report.symptoms],
    )


def _merge_transfers(groups: Any) -> list[dict[str, Any]]:
    merged: dict[tuple[str, str, int], list[int]] = {}
    for group in groups:
        for transfer in group:
            key = (transfer["kind"], transfer["file"], transfer["line"])
            counts = merged.setdefault(key, [0, 0])
            counts[0] += transfer["count"]
            counts[1] += transfer["bytes"]
    return [
        {"kind": kind, "file": file, "line": line, "count": count, "bytes": size}
        for (kind, file, line), (count, size) in sorted(merged.items())
    ]
