"""What ``--fix`` would apply, counted the way ``--fix`` applies it.

The summary's "N fixable with --fix", ``--statistics``' ``[*]`` and
``--diff``'s "Would apply N fixes" must say what ``--fix`` does, and the
findings that carry a fix do not: ``--fix`` applies a fix found twice once,
finds new fixes after each pass, refuses a file LibCST cannot reproduce or a
fix whose result would not parse, and does not write a file its write policy
refuses (read-only, reached from outside the paths given, hard-linked). So the
count is taken from the fixes computed as ``--fix`` computes them (not
written), less the files it would not write.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from devlint.diagnostic import Diagnostic, SuggestedFix
from devlint.running.safe_write import OUTSIDE_ROOTS_FLAG, WritePolicy

if TYPE_CHECKING:  # devlint.running.fix loads LibCST: only a run that computes fixes needs it
    from devlint.running.fix import FixResult


def wanted(fix: SuggestedFix | None, unsafe: bool) -> bool:
    """Whether ``--fix`` applies ``fix`` (``--unsafe-fixes``: also the unsafe ones)."""
    return fix is not None and (fix.safe or unsafe)


def unsafe_left(diagnostics: list[Diagnostic], unsafe: bool) -> int:
    """How many fixes are left that only ``--unsafe-fixes`` applies."""
    if unsafe:
        return 0
    return sum(1 for d in diagnostics if d.fix is not None and not d.fix.safe)


@dataclass(frozen=True)
class FixCount:
    """The code of each fix ``--fix`` would apply, and the fixes left after them that
    only ``--unsafe-fixes`` would apply."""

    codes: tuple[str, ...] = ()
    unsafe_left: int = 0

    @property
    def applied(self) -> int:
        return len(self.codes)

    @classmethod
    def of(cls, results: Iterable[FixResult]) -> FixCount:
        """The count of files' fix results (of the files ``--fix`` would write)."""
        results = list(results)
        return cls(
            tuple(code for result in results if result.changed for code in result.fixed_codes),
            sum(result.unsafe_left for result in results),
        )


NO_FIXES = FixCount()


def fixable(
    reported: Iterable[Diagnostic],
    fixed: Mapping[str, FixResult],
    refusal: Callable[[str], str | None],
    *,
    unsafe: bool,
) -> FixCount:
    """What ``--fix`` would apply to the files ``reported`` names. ``fixed``: the fix result
    (computed, not written) of each file with a fix ``--fix`` wants; a file without one
    keeps its fixes that only ``--unsafe-fixes`` applies, as ``--fix`` would report them.
    ``refusal(name)``: why ``--fix`` would not write the file (then it counts nothing)."""
    with_fixes = [d for d in reported if d.fix is not None]
    writable = {name: refusal(name) is None for name in {d.path for d in with_fixes}}
    counted = FixCount.of(result for name, result in fixed.items() if writable.get(name, True))
    unfixed = [d for d in with_fixes if d.path not in fixed and writable[d.path]]
    return FixCount(counted.codes, counted.unsafe_left + unsafe_left(unfixed, unsafe))


def write_refusal(path: Path, policy: WritePolicy) -> str | None:
    """Why ``devlint.running.safe_write.rewrite`` would refuse to write ``path``, or None: its
    checks, in its order and words, without writing (``--diff`` and the count must not
    write). A test holds the two to the same answers."""
    try:
        real = os.path.realpath(path)
        before = os.stat(real)
    except OSError as error:
        return error.strerror or str(error)
    if not before.st_mode & stat.S_IWUSR or not os.access(real, os.W_OK):
        return "the file is read-only"
    if not policy.outside_roots and not policy.is_inside(real):
        return (
            f"its real path {real} is outside the paths given (it is reached through a symbolic"
            f" link); pass {OUTSIDE_ROOTS_FLAG} to write it"
        )
    if before.st_nlink > 1 and not policy.outside_roots:
        return (
            f"the file has {before.st_nlink} hard links, which may lie outside the paths given;"
            f" pass {OUTSIDE_ROOTS_FLAG} to edit it in place (every link sees the fix)"
        )
    return None
