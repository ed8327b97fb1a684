"""``devlint lsp`` while the user types: which versions are published, how late, and memory.

Usage::

    python benchmarks/lsp_typing.py [--lines 5000] [--edits 60] [--interval 0.3]

Starts the server as an editor does (``python -m devlint lsp`` over stdio, driven
by pygls' LanguageClient), opens a generated file of ``--lines`` lines of training
code (``lsp_latency.generated_source``) and times one edit alone: from didChange to
the diagnostics of that version, the debounce included (the median of three). Then
it sends ``--edits`` one-character edits ``--interval`` seconds apart, faster than
the server lints, without waiting for anything, and reports

- the versions whose diagnostics arrived while the edits went on, and after;
- how long after the last edit its version was published, in seconds and in lone
  edits' times;
- the server's resident memory (``VmRSS`` in ``/proc/<pid>/status``, Linux only)
  before the edits, at its highest, and once the last version is published.

A script, not a test: wall-clock numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsp_latency import generated_source
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path


def resident_mb(pid: int) -> float:
    """The resident memory of process ``pid``, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


class Typist:
    """A client that edits one line of one document and notes when each version arrives."""

    def __init__(self, client: LanguageClient, uri: str, source: str) -> None:
        self.client, self.uri = client, uri
        self.arrived: dict[int, float] = {}
        lines = source.splitlines()
        self.line = next(
            index for index in range(len(lines) // 2, len(lines)) if "batch_size=32" in lines[index]
        )
        self.column = lines[self.line].index("32")
        self.version = 1

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams) -> None:
            if params.version is not None:
                self.arrived.setdefault(params.version, time.monotonic())

    def edit(self) -> int:
        """One keystroke (batch_size=32 <-> 42); the new version."""
        self.version += 1
        start = types.Position(self.line, self.column)
        end = types.Position(self.line, self.column + 1)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=self.uri, version=self.version
                ),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(start, end), text="3" if self.version % 2 else "4"
                    )
                ],
            )
        )
        return self.version

    async def published(self, version: int, timeout: float = 600) -> float:
        """When ``version``'s diagnostics arrived (waiting for them)."""
        deadline = time.monotonic() + timeout
        while version not in self.arrived:
            if time.monotonic() > deadline:
                raise TimeoutError(f"version {version} not published in {timeout} s")
            await asyncio.sleep(0.01)
        return self.arrived[version]


async def measure(source: str, edits: int, interval: float) -> None:
    client = LanguageClient("devlint-typing", "1")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "train_big.py"
        path.write_text(source, encoding="utf-8")
        uri = from_fs_path(str(path))
        await client.start_io(sys.executable, "-m", "devlint", "lsp", cwd=folder)
        assert client._server is not None
        pid = client._server.pid
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(), root_uri=from_fs_path(folder)
            )
        )
        client.initialized(types.InitializedParams())
        typist = Typist(client, uri, source)
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="python", version=1, text=source)
            )
        )
        await typist.published(1)
        alone = []
        for _ in range(3):
            sent = time.monotonic()
            alone.append(await typist.published(typist.edit()) - sent)
        lone = statistics.median(alone)
        before = resident_mb(pid)
        first = typist.version + 1
        highest = before
        for _ in range(edits):
            typist.edit()
            await asyncio.sleep(interval)
            highest = max(highest, resident_mb(pid))
        stopped, last = time.monotonic(), typist.version
        waiting = asyncio.ensure_future(typist.published(last))
        while not waiting.done():
            highest = max(highest, resident_mb(pid))
            await asyncio.sleep(0.05)
        late = waiting.result() - stopped
        after = resident_mb(pid)
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
    during = sorted(v for v, at in typist.arrived.items() if v >= first and at < stopped)
    later = sorted(v for v, at in typist.arrived.items() if v >= first and at >= stopped)
    print(f"file: {source.count(chr(10))} lines; one edit alone: {lone:.2f} s (median of 3)")
    print(f"{edits} edits {interval} s apart: versions {first} to {last}")
    print(f"published while typing: {during or 'none'}; after: {later}")
    print(
        f"version {last} published {late:.2f} s after the last edit ({late / lone:.1f} lone edits)"
    )
    print(f"server memory: {before:.0f} MB before, {highest:.0f} MB at most, {after:.0f} MB after")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--edits", type=int, default=60)
    parser.add_argument("--interval", type=float, default=0.3, help="seconds between edits")
    args = parser.parse_args()
    asyncio.run(measure(generated_source(args.lines), args.edits, args.interval))


if __name__ == "__main__":
    main()
