"""The editor path: re-linting one file after an edit costs a parse plus its analysis.

Usage::

    python benchmarks/editor.py [FILE] [--lines 2000] [--edits 30]

An editor (``devlint lsp``) or the flake8 plugin re-lints one buffer per
keystroke pause, in a process that is already running. This script measures
that path in one process, on FILE (default: a generated 2,000-line training
module with models and loaders, each with the same few real findings: 118 in
all, half of them fixable; ``--lines`` sets its size): for ``--edits``
one-character edits in the middle of the file, one at a time (so nothing can
be reused from the previous text), it times

- ``libcst.parse_module(text)``: the floor;
- ``analyse(parse_module(text))``: the target, a parse plus the analysis;
  what ``lint_report`` adds is the rules, their messages and the source
  positions of what they report;
- ``devlint.running.engine.lint_report(text)``: what the editor runs per edit, and
  flake8 per file (limits check, parse, analysis, every rule, noqa): the
  diagnostics, no fix built (the language server builds fixes only for a code
  action);
- ``devlint.running.engine.lint_source(text)``: the same with every fix built, as
  ``devlint check`` does;

and prints the median and worst of each, the editor's ratio to the parse and
to the target, and
the first call's time (the one-time cost of importing devlint and loading the
torch API table is not paid per edit). It also times one ``devlint check
--no-cache FILE`` command, start-up included, which is what a pre-commit hook
pays per run.
End-to-end latency through the language server (debounce, JSON-RPC) is
``benchmarks/lsp_latency.py``'s business.

A script, not a test: wall-clock numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

BLOCK = """

class Encoder{n}(nn.Module):
    def __init__(self, width: int = {width}):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)
        self.scale = torch.ones(width)

    def forward(self, x):
        hidden = self.norm(self.proj(x))
        mask = torch.arange(x.shape[1]) < x.shape[1] // 2
        return hidden * self.scale, mask


def train_{n}(dataset, epochs: int = 3):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Encoder{n}().to(device)
    loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0]))
    for epoch in range(epochs):
        total = 0.0
        for inputs, targets in loader:
            inputs = inputs.to(device)
            optimizer.zero_grad()
            outputs, _ = model(inputs)
            loss = criterion(outputs, targets)
            loss.backward()
            optimizer.step()
            total += loss.item()
        print(epoch, total / len(loader))
    torch.save(model.state_dict(), "encoder_{n}.pt")
    return model
"""
HEADER = """import torch
import torch.nn as nn
from torch.utils.data import DataLoader
"""


def generated(lines: int) -> str:
    """A module of about ``lines`` lines of training code."""
    parts = [HEADER]
    count = HEADER.count("\n")
    n = 0
    while count < lines:
        block = BLOCK.format(n=n, width=16 + n % 64)
        parts.append(block)
        count += block.count("\n")
        n += 1
    return "".join(parts)


def edits(text: str, count: int) -> list[str]:
    """``count`` versions of ``text``, each with one more character typed in a comment."""
    middle = text.index("\n", len(text) // 2) + 1
    return [text[:middle] + f"# edit {'x' * i}\n" + text[middle:] for i in range(count)]


def timed(function, versions: list[str]) -> list[float]:
    times = []
    for version in versions:
        start = time.perf_counter()
        function(version)
        times.append(time.perf_counter() - start)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("file", nargs="?", type=Path, help="the file to re-lint")
    parser.add_argument("--lines", type=int, default=2000, help="size of the generated file")
    parser.add_argument("--edits", type=int, default=30, help="edits to time")
    args = parser.parse_args(argv)
    text = args.file.read_text(encoding="utf-8") if args.file else generated(args.lines)
    name = str(args.file or "generated.py")

    import_start = time.perf_counter()
    import libcst

    from devlint.config import DEFAULT_SETTINGS
    from devlint.core.analysis import analyse
    from devlint.running.engine import lint_report, lint_source

    imported = time.perf_counter() - import_start
    first_start = time.perf_counter()
    first_findings = lint_report(text, name).diagnostics
    first = time.perf_counter() - first_start

    versions = edits(text, args.edits)
    parse = timed(libcst.parse_module, versions)
    target = timed(lambda text: analyse(libcst.parse_module(text), DEFAULT_SETTINGS), versions)
    lint = timed(lambda version: lint_report(version, name), versions)
    with_fixes = timed(lambda version: lint_source(version, name), versions)

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch, "edited.py")
        path.write_text(versions[-1], encoding="utf-8")
        command = [sys.executable, "-m", "devlint", "check", "--no-cache", str(path)]
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, cwd=REPO_ROOT, check=False)
        one_shot = time.perf_counter() - start

    lines = text.count("\n")
    print(f"{name}: {lines} lines, {len(first_findings)} findings; {args.edits} edits")
    print(f"{'':34} {'median ms':>10} {'worst ms':>10}")
    for label, times in (
        ("parse (floor)", parse),
        ("parse + analyse (the target)", target),
        ("lint_report (editor, flake8)", lint),
        ("lint_source, fixes built (check)", with_fixes),
    ):
        print(f"{label:34} {statistics.median(times) * 1e3:10.1f} {max(times) * 1e3:10.1f}")
    ratio = statistics.median(lint) / statistics.median(parse)
    print(f"ratio lint_report/parse (median):   {ratio:10.2f}")
    ratio = statistics.median(lint) / statistics.median(target)
    print(f"ratio lint_report/target (median):  {ratio:10.2f}")
    print(f"importing libcst and devlint:       {imported * 1e3:10.1f} ms (once per process)")
    print(f"first lint_report (tables loaded):  {first * 1e3:10.1f} ms (once per process)")
    print(f"devlint check --no-cache FILE:      {one_shot * 1e3:10.1f} ms (a new process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
