"""What a run did between host and device, by the user's source line.

Both backends record here: the emulator as it performs transfers, the real
CUDA backend through a counting dispatch mode. A transfer is attributed to the
innermost frame of the user's code, so ``model.to(device)`` is one line even
though PyTorch copies each parameter from inside ``Module._apply``.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from dataclasses import dataclass, field
from typing import Any

from devlint.harness.words import counted
from devlint.rule_examples import rules_root

HOST_TO_DEVICE = "host-to-device"
DEVICE_TO_HOST = "device-to-host"
DEVICE_TO_DEVICE = "device-to-device"
CREATED_THEN_MOVED = "host-to-device copy of a tensor just created on the host"
"""The measured symptom of creating a tensor on the host and moving it on the same line."""

MAX_ERRORS = 20

Location = tuple[str, int]

HARNESS_DIR = os.path.dirname(os.path.realpath(__file__))
"""The harness's own code, never the user's (the rest of devlint never runs in a program)."""


class _UserCode:
    """Decides, once per file, whether a frame belongs to the user's program.

    Library code is the stdlib, installed packages, torch and the harness. The rule examples
    are user code wherever devlint is installed (an installed devlint carries them inside)."""

    def __init__(self) -> None:
        self._verdicts: dict[str, bool] = {}
        self._roots: tuple[str, ...] | None = None
        self._examples = os.path.join(os.path.realpath(rules_root()), "")

    def roots(self) -> tuple[str, ...]:
        if self._roots is None:
            paths = sysconfig.get_paths()
            roots = {paths[name] for name in ("stdlib", "platstdlib", "purelib", "platlib")}
            roots.add(HARNESS_DIR)
            torch = sys.modules.get("torch")
            if torch is not None and getattr(torch, "__file__", None):
                roots.add(os.path.dirname(torch.__file__))
            self._roots = tuple(os.path.join(os.path.realpath(root), "") for root in roots)
        return self._roots

    def __call__(self, filename: str) -> bool:
        verdict = self._verdicts.get(filename)
        if verdict is None:
            if filename.startswith("<"):
                verdict = False
            else:
                real = os.path.realpath(filename)
                verdict = real.startswith(self._examples) or not real.startswith(self.roots())
            self._verdicts[filename] = verdict
        return verdict


is_user_file = _UserCode()


def user_frame(depth: int = 2) -> Location | None:
    """The innermost caller that is the user's code (not torch, the harness or the stdlib)."""
    frame = sys._getframe(depth)
    while frame is not None:
        if is_user_file(frame.f_code.co_filename):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None


_PLUMBING = ("_compile.py", "overrides.py", "_python_dispatch.py")
"""torch's files that only pass a call on to a mode; they say nothing about who called."""
_plumbing: dict[str, bool] = {}


def _is_plumbing(filename: str) -> bool:
    verdict = _plumbing.get(filename)
    if verdict is None:
        real = os.path.realpath(filename)
        verdict = real.startswith(os.path.join(HARNESS_DIR, "")) or (
            os.sep + "torch" + os.sep in real and real.endswith(_PLUMBING)
        )
        _plumbing[filename] = verdict
    return verdict


def direct_user_caller(depth: int = 2) -> Location | None:
    """The user's line, if the user's code called into torch directly (not via torch's Python)."""
    frame = sys._getframe(depth)
    while frame is not None and _is_plumbing(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is not None and is_user_file(frame.f_code.co_filename):
        return frame.f_code.co_filename, frame.f_lineno
    return None


@dataclass
class Recorder:
    """Transfers, create-then-move copies and device errors of one process."""

    transfers: dict[tuple[str, str, int], list[int]] = field(default_factory=dict)
    created_then_moved: dict[Location, list[int]] = field(default_factory=dict)
    device_errors: list[dict[str, object]] = field(default_factory=list)

    def transfer(self, kind: str, nbytes: int, created_at: Location | None = None) -> None:
        where = user_frame(3) or ("<unknown>", 0)
        counts = self.transfers.setdefault((kind, *where), [0, 0])
        counts[0] += 1
        counts[1] += nbytes
        if kind == HOST_TO_DEVICE and created_at is not None and created_at == where:
            moved = self.created_then_moved.setdefault(where, [0, 0])
            moved[0] += 1
            moved[1] += nbytes

    def clear(self) -> None:
        """Forget what was recorded: a forked child starts with its parent's records."""
        self.transfers.clear()
        self.created_then_moved.clear()
        self.device_errors.clear()

    def device_error(self, error: BaseException) -> None:
        if len(self.device_errors) >= MAX_ERRORS:
            return
        file, line = user_frame(3) or ("<unknown>", 0)
        self.device_errors.append(
            {"type": type(error).__name__, "message": str(error), "file": file, "line": line}
        )

    def to_json(self) -> dict[str, object]:
        return {
            "transfers": [
                {"kind": kind, "file": file, "line": line, "count": count, "bytes": size}
                for (kind, file, line), (count, size) in sorted(self.transfers.items())
            ],
            "created_then_moved": [
                {"file": file, "line": line, "count": count, "bytes": size}
                for (file, line), (count, size) in sorted(self.created_then_moved.items())
            ],
            "device_errors": list(self.device_errors),
        }


def symptoms(created_then_moved: list[dict[str, Any]]) -> list[str]:
    """Measured symptoms, in the words rules declare them (see docs/writing-a-rule.md), from
    the create-then-move copies of a run (``Recorder.to_json``'s, merged over its processes)."""
    if not created_then_moved:
        return []
    count = sum(copy["count"] for copy in created_then_moved)
    places = ", ".join(
        f"{os.path.basename(file)}:{line}"
        for file, line in sorted({(copy["file"], copy["line"]) for copy in created_then_moved})
    )
    return [f"{CREATED_THEN_MOVED}: {counted(count, 'copy', 'copies')} at {places}"]
