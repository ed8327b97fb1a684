"""Checkouts of pinned commits for the real-world benchmarks, made from fetched mirrors.

Only what linting needs is written (``*.py``, ``*.pyi``, ``pyproject.toml``),
and ``MARKER`` names the commit, so a checkout of another commit is noticed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

MARKER = ".devlint-ledger-commit"
EXTRACTED_SUFFIXES = (".py", ".pyi")
EXTRACTED_NAMES = ("pyproject.toml",)


def write_checkout(
    gitdir: Path, commit: str, dest: Path, suffixes: tuple[str, ...] = EXTRACTED_SUFFIXES
) -> None:
    """Write the Python files (``suffixes``) and ``pyproject.toml`` of ``commit`` to ``dest``,
    then the marker.

    Blobs a partial mirror lacks are skipped: ``git archive`` would fail on them.
    """
    listing = subprocess.run(
        ["git", f"--git-dir={gitdir}", "ls-tree", "-r", "-z", "--full-tree", commit],
        check=True,
        capture_output=True,
    ).stdout.decode()
    wanted = []
    for record in listing.split("\0"):
        if not record:
            continue
        meta, path = record.split("\t", 1)
        _mode, kind, sha = meta.split()
        name = path.rsplit("/", 1)[-1]
        if kind == "blob" and (name.endswith(suffixes) or name in EXTRACTED_NAMES):
            wanted.append((sha, path))
    batch = subprocess.run(
        ["git", f"--git-dir={gitdir}", "cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha, _ in wanted).encode(),
        check=True,
        capture_output=True,
    ).stdout
    position = 0
    for _sha, path in wanted:
        end = batch.index(b"\n", position)
        header = batch[position:end].decode().split()
        position = end + 1
        if len(header) < 3 or header[1] != "blob":  # "<sha> missing": not in the mirror
            continue
        size = int(header[2])
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[position : position + size])
        position += size + 1
    dest.mkdir(parents=True, exist_ok=True)
    mark_root(dest)
    (dest / MARKER).write_text(commit + "\n")


def mark_root(dest: Path) -> None:
    """Give a checkout the empty ``.git`` folder a clone has at its root: devlint finds a
    project's root by it, so the files of a repository without ``pyproject.toml`` or
    ``setup.py`` import each other as they do in a clone (``from transformer.Layers import
    ...`` in ``transformer/Models.py``). Idempotent, for checkouts written before."""
    (dest / ".git").mkdir(exist_ok=True)
