"""``devlint lsp`` with its lints recorded, for the tests of superseded versions and memory.

``python -m recorded_lsp`` (with this folder on ``PYTHONPATH``) runs the real server
with the lint function it calls (``devlint.frontends.lsp.lint_report``) wrapped: before
each lint, a JSON line goes to the file named by ``$RECORDED_LSP_LOG`` with the version
the text says it is (its line ``# version N``), the versions whose analysis is still
in memory (``alive``: those with a function ``version_N`` among the objects the garbage
collector tracks, uncollected garbage included) and how many finished futures the
protocol still files (``futures``: what is left of the messages handled; counted in its
table, not among garbage the collector may not have reached yet under load). A text
with a line ``# hold`` is linted only once the file named by ``$RECORDED_LSP_GATE``
exists, so that a test can send changes while that lint runs.
"""

from __future__ import annotations

import gc
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import libcst as cst

from devlint.frontends import lsp

LOG_ENV = "RECORDED_LSP_LOG"
GATE_ENV = "RECORDED_LSP_GATE"
HOLD_LIMIT = 120.0
"""Seconds a held lint waits for its gate at most: a test that never opens it still ends."""

_VERSION = re.compile(r"^# version (\d+)$", re.MULTILINE)
_FUNCTION = re.compile(r"version_(\d+)")
_real_lint_report = lsp.lint_report
_real_create_server = lsp.create_server
_servers: list[lsp.DevlintLanguageServer] = []


def versioned(text: str, version: int, hold: bool = False) -> str:
    """``text`` marked as ``version`` (its line and its function), and held if asked."""
    mark = f"# version {version}\n\n\ndef version_{version}():\n    return {version}\n"
    return text + mark + ("# hold\n" if hold else "")


def records(log: Path) -> list[dict[str, Any]]:
    """What the server recorded so far: ``version`` and ``alive`` of each lint, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def _recorded_lint_report(source: str, *args: Any, **kwargs: Any) -> Any:
    version = _VERSION.search(source)
    record = {
        "version": int(version.group(1)) if version else None,
        "alive": _alive(),
        "futures": _finished_futures(),
    }
    with open(os.environ[LOG_ENV], "a", encoding="utf-8") as log:
        log.write(json.dumps(record) + "\n")
    if re.search(r"^# hold$", source, re.MULTILINE):
        gate, deadline = Path(os.environ[GATE_ENV]), time.monotonic() + HOLD_LIMIT
        while not gate.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    return _real_lint_report(source, *args, **kwargs)


def _alive() -> list[int]:
    """The versions with a ``version_N`` function node in memory, garbage included."""
    found = set()
    for node in gc.get_objects():
        if type(node) is cst.FunctionDef and (match := _FUNCTION.fullmatch(node.name.value)):
            found.add(int(match.group(1)))
    return sorted(found)


def _finished_futures() -> int:
    """Futures that are done and still filed by the server's protocol."""
    (server,) = _servers
    return sum(1 for future in server.protocol._request_futures.values() if future.done())


def _recorded_create_server() -> lsp.DevlintLanguageServer:
    """The real server, kept at hand (``serve`` freezes it out of ``gc.get_objects``)."""
    server = _real_create_server()
    _servers.append(server)
    return server


if __name__ == "__main__":
    lsp.lint_report = _recorded_lint_report
    lsp.create_server = _recorded_create_server
    sys.exit(lsp.serve())
