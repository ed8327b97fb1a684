"""What ``devlint run`` prints after the script: the first device error and the transfers
(by cell and line in a notebook)."""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from devlint.harness.observe import DEVICE_TO_DEVICE, DEVICE_TO_HOST, HOST_TO_DEVICE
from devlint.harness.report import RunReport
from devlint.harness.words import counted
from devlint.inputs.reading import read_regular_file
from devlint.notebooks.program import Program, program_of
from devlint.notebooks.reading import NotebookError, is_notebook, read_notebook

KINDS = (HOST_TO_DEVICE, DEVICE_TO_HOST, DEVICE_TO_DEVICE)


def run_summary(report: RunReport, gpus: int, status: int) -> str:
    lines = [f"\ndevlint run: exit status {status}, {counted(gpus, 'emulated GPU')}"]
    if report.device_errors:
        lines.append(f"first device error: {_error(report.device_errors[0])}")
    elif report.exception:
        lines.append(f"no device error; the script failed: {_error(report.exception)}")
    else:
        lines.append("no device error")
    lines += [f"measured: {symptom}" for symptom in report.symptoms]
    lines += _transfers(report.transfers)
    return "\n".join(lines) + "\n"


def _error(error: dict[str, Any]) -> str:
    message = str(error["message"]).strip().splitlines()
    where = _where(str(error["file"]), int(error["line"]))
    return f"{where}: {error['type']}: {message[0] if message else ''}"


def _transfers(transfers: list[dict[str, Any]]) -> list[str]:
    if not transfers:
        return ["no transfers between host and device"]
    by_line: dict[str, dict[str, tuple[int, int]]] = {}
    for transfer in transfers:
        where = _where(transfer["file"], transfer["line"])
        by_line.setdefault(where, {})[transfer["kind"]] = (transfer["count"], transfer["bytes"])
    header = ("LINE", *KINDS)
    rows = [
        (where, *(_cell(kinds.get(kind)) for kind in KINDS))
        for where, kinds in sorted(by_line.items(), key=lambda item: _line_key(item[0]))
    ]
    totals = {
        kind: (
            sum(t["count"] for t in transfers if t["kind"] == kind),
            sum(t["bytes"] for t in transfers if t["kind"] == kind),
        )
        for kind in KINDS
    }
    rows.append(("total", *(_cell(totals[kind]) for kind in KINDS)))
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(4)]
    table = ["transfers by source line:"]
    for row in [header, *rows]:
        table.append(
            "  "
            + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
    return table


def _cell(counts: tuple[int, int] | None) -> str:
    if not counts or not counts[0]:
        return "-"
    count, size = counts
    return f"{count} ({_bytes(size)})"


def _bytes(size: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size} B"


def _path(file: str) -> str:
    try:
        relative = os.path.relpath(file)
    except ValueError:
        return file
    return file if relative.startswith("..") else relative


def _where(file: str, line: int) -> str:
    """``train.py:12``; in a notebook, ``nb.ipynb:cell 3:4`` (its program's line by cell)."""
    if not is_notebook(file):
        return f"{_path(file)}:{line}"
    cell, in_cell = _notebook_program(file).place(line)
    return f"{_path(file)}:cell {cell}:{in_cell}"


@cache
def _notebook_program(file: str) -> Program:
    try:
        return program_of(read_notebook(read_regular_file(file)))
    except (OSError, NotebookError):
        return Program("", (), ())  # read since the run: places are (0, 1)


def _line_key(where: str) -> tuple[str, int, int]:
    file, _, line = where.rpartition(":")
    file, _, cell = file.rpartition(":cell ") if ":cell " in file else (file, "", "0")
    return file, int(cell) if cell.isdigit() else 0, int(line) if line.isdigit() else 0
