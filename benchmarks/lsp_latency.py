"""Latency of ``devlint lsp``: from didChange to the publishDiagnostics of that version.

Usage::

    python benchmarks/lsp_latency.py [--lines 2000] [--edits 50] [--debounce-ms 200 0]

Starts the server as an editor does (``python -m devlint lsp`` over stdio,
driven by pygls' LanguageClient), opens a generated file of ``--lines``
lines of training code (classes, loaders, device moves and a few real
findings), then makes ``--edits`` one-character edits in the middle of it,
one at a time: each edit is sent, and the clock stops when the diagnostics
for that document version arrive. It prints the median and the 95th
percentile, once per debounce setting: the default debounce (what users
get) and 0 (the server's own cost: lint plus transport).

After each version's diagnostics arrive it also asks for the code actions at
one diagnostic, as an editor does when the cursor rests on it (no kind
filter, so the fix-all action is included), and reports that latency too.
The client says it resolves code actions, as VS Code, Neovim and Helix do,
so the fix-all's edits are not built until picked; ``--no-resolve`` measures
a client that cannot, for which the server builds every fix at once.

A script, not a test: wall-clock numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

BLOCK = """

class Encoder{n}(nn.Module):
    def __init__(self, width: int = {width}):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.scale = torch.ones(width)

    def forward(self, x):
        return self.proj(x) * self.scale


def train_{n}(dataset, epochs: int = 3):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Encoder{n}().to(device)
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        for inputs, targets in loader:
            inputs = inputs.to(device)
            optimizer.zero_grad()
            loss = F.mse_loss(model(inputs), targets)
            loss.backward()
            optimizer.step()
    return model


def evaluate_{n}(model, samples):
    weights = torch.zeros({width}, device="cuda")
    total = torch.tensor(0.0)
    for sample in samples:
        total = total + (weights * sample).sum()
    return total.item()


def export_{n}(model, path):
    state = model.state_dict()
    torch.save(state, path)
"""
HEADER = '''"""Generated for the devlint LSP latency benchmark."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader
'''


def generated_source(lines: int) -> str:
    """Exactly ``lines`` lines of realistic training code (whole blocks, then constants)."""
    parts = [HEADER]
    count = HEADER.count("\n")
    n = 0
    while True:
        block = BLOCK.format(n=n, width=64 + n % 7)
        if count + block.count("\n") > lines:
            break
        parts.append(block)
        count += block.count("\n")
        n += 1
    parts.extend(f"STEP_{index} = {index}\n" for index in range(lines - count))
    return "".join(parts)


def _capabilities(resolves: bool) -> types.ClientCapabilities:
    resolve = types.ClientCodeActionResolveOptions(properties=["edit"]) if resolves else None
    return types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            code_action=types.CodeActionClientCapabilities(
                data_support=resolves, resolve_support=resolve
            )
        )
    )


async def measure(
    source: str, edits: int, debounce_ms: int, resolves: bool = True
) -> dict[str, object]:
    client = LanguageClient("devlint-latency", "1")
    arrived: dict[int, float] = {}
    event = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: types.PublishDiagnosticsParams) -> None:
        if params.version is not None:
            arrived.setdefault(params.version, time.perf_counter())
            published[params.version] = params.diagnostics
        event.set()

    published: dict[int, list[types.Diagnostic]] = {}

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params: types.LogMessageParams) -> None:
        print(params.message, file=sys.stderr)

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "train_big.py"
        path.write_text(source, encoding="utf-8")
        uri = from_fs_path(str(path))
        await client.start_io(sys.executable, "-m", "devlint", "lsp", cwd=folder)
        await client.initialize_async(
            types.InitializeParams(
                capabilities=_capabilities(resolves),
                root_uri=from_fs_path(folder),
                initialization_options={"debounceMs": debounce_ms},
            )
        )
        client.initialized(types.InitializedParams())
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="python", version=1, text=source)
            )
        )
        await wait_for_version(arrived, event, 1)
        lines = source.splitlines()
        target = next(
            index for index in range(len(lines) // 2, len(lines)) if "batch_size=32" in lines[index]
        )
        column = lines[target].index("32")
        latencies, action_latencies = [], []
        for version in range(2, edits + 2):
            digit = "3" if version % 2 else "4"  # batch_size=32 <-> batch_size=42
            change = types.TextDocumentContentChangePartial(
                range=types.Range(
                    types.Position(target, column), types.Position(target, column + 1)
                ),
                text=digit,
            )
            sent = time.perf_counter()
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[change],
                )
            )
            await wait_for_version(arrived, event, version)
            latencies.append((arrived[version] - sent) * 1000)
            action_latencies.append(await code_action_ms(client, uri, published[version]))
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
    return {
        "debounce_ms": debounce_ms,
        "edits": edits,
        "diagnostics": len(published.get(edits + 1, [])),
        **_summary(latencies),
        "code_action": _summary(action_latencies),
    }


async def code_action_ms(
    client: LanguageClient, uri: str, diagnostics: list[types.Diagnostic]
) -> float:
    """Time of the code actions request at the middle diagnostic (the first of its version)."""
    at = diagnostics[len(diagnostics) // 2]
    sent = time.perf_counter()
    await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=at.range,
            context=types.CodeActionContext(diagnostics=[at]),
        )
    )
    return (time.perf_counter() - sent) * 1000


def _summary(latencies: list[float]) -> dict[str, float]:
    latencies = sorted(latencies)
    return {
        "median_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(latencies[max(0, round(0.95 * len(latencies)) - 1)], 1),
        "min_ms": round(latencies[0], 1),
        "max_ms": round(latencies[-1], 1),
    }


async def wait_for_version(arrived: dict[int, float], event: asyncio.Event, version: int) -> None:
    deadline = time.monotonic() + 60
    while version not in arrived:
        event.clear()
        await asyncio.wait_for(event.wait(), max(0.01, deadline - time.monotonic()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--debounce-ms", type=int, nargs="+", default=[200, 0])
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument(
        "--no-resolve",
        action="store_true",
        help="a client that cannot resolve code actions (the fix-all comes with its edits)",
    )
    args = parser.parse_args()
    source = generated_source(args.lines)
    resolves = not args.no_resolve
    results = [asyncio.run(measure(source, args.edits, ms, resolves)) for ms in args.debounce_ms]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}")
    print(f"file: {source.count(chr(10))} lines, {args.edits} edits, one at a time")
    for result in results:
        print(
            f"debounce {result['debounce_ms']:>4} ms: median {result['median_ms']} ms, "
            f"p95 {result['p95_ms']} ms (min {result['min_ms']}, max {result['max_ms']}; "
            f"{result['diagnostics']} diagnostics)"
        )
        action = result["code_action"]
        print(
            f"{'':16} code actions at a diagnostic: median {action['median_ms']} ms, "
            f"p95 {action['p95_ms']} ms (max {action['max_ms']})"
        )


if __name__ == "__main__":
    main()
