"""Applying fixes: ``devlint check --fix`` and ``--diff`` (rules build theirs with the rule kit).

A rule's ``Fix`` replaces the source text of one node; the engine turns it into
line/column edits on the ``Diagnostic``. ``fix_source`` applies every wanted fix
that does not overlap an earlier one, lints the result again and repeats until
nothing is left to fix (ruff's model). A file whose LibCST round trip is not
exact (``module.code != source``: LibCST loses some whitespace and line
continuations) is never rewritten: its node texts and positions cannot be trusted.
"""

from __future__ import annotations

import difflib
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from io import BytesIO
from pathlib import Path

import libcst as cst

from devlint.config import DEFAULT_SETTINGS, Settings
from devlint.diagnostic import Diagnostic, SuggestedFix
from devlint.inputs.decoding import decode_source
from devlint.inputs.reading import read_regular_file
from devlint.notices import INTERNAL_ERROR, NOT_REWRITTEN, UNREADABLE, notice, unreadable
from devlint.project.index import FileImporter
from devlint.running.engine import lint_source, project_importer
from devlint.running.fix_count import unsafe_left, wanted
from devlint.running.safe_write import NotRewritten, WritePolicy, rewrite

MAX_PASSES = 10
ROUND_TRIP = (
    "not rewritten: LibCST does not reproduce this file exactly (a LibCST bug); fix it by hand"
)
_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class FixResult:
    """One file after ``--fix``: its text before and after, and what is left to report."""

    path: str
    source: str
    fixed: str
    diagnostics: list[Diagnostic] = field(default_factory=list)  # left after fixing
    fixed_codes: tuple[str, ...] = ()  # the code of each fix applied
    unsafe_left: int = 0  # fixes left that only --unsafe-fixes applies
    problem: str | None = None  # why the file was not (fully) fixed, for stderr
    encoding: str = "utf-8"
    unfixed: list[Diagnostic] = field(default_factory=list)  # the source's, if it changed

    @property
    def changed(self) -> bool:
        return self.fixed != self.source

    @property
    def applied(self) -> int:
        """How many fixes were applied (a fix found twice counts once)."""
        return len(self.fixed_codes)

    def diff(self) -> str:
        """A unified diff of the fixes ("" when nothing changed)."""
        if not self.changed:
            return ""
        lines = difflib.unified_diff(_lines(self.source), _lines(self.fixed), self.path, self.path)
        return "".join(
            line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
            for line in lines
        )


def fix_source(
    source: str,
    path: str = "<stdin>",
    settings: Settings = DEFAULT_SETTINGS,
    *,
    unsafe: bool = False,
    importer: FileImporter | None = None,
    linted: list[Diagnostic] | None = None,
) -> FixResult:
    """Apply the wanted fixes until none is left; never raises. ``importer``: as for
    ``engine.lint_source`` (the project's other files, which fixes never edit). ``linted``:
    what linting ``source`` reported already (``devlint check`` counting what ``--fix``
    would apply), so that only the fixed text is linted again."""
    lint = partial(lint_source, settings=settings, importer=importer)
    unfixed = diagnostics = linted if linted is not None else lint(source, path)
    if not any(wanted(d.fix, unsafe) for d in diagnostics):
        return FixResult(path, source, source, diagnostics, (), unsafe_left(diagnostics, unsafe))
    if not round_trips(source):
        return FixResult(path, source, source, diagnostics, problem=ROUND_TRIP)
    text = source
    applied: tuple[str, ...] = ()
    for _ in range(MAX_PASSES):
        chosen = [d for d in diagnostics if wanted(d.fix, unsafe)]
        if not chosen:
            left = unsafe_left(diagnostics, unsafe)
            return FixResult(path, source, text, diagnostics, applied, left, unfixed=unfixed)
        candidate, done = apply_fixes(text, [d.fix for d in chosen if d.fix is not None])
        if not round_trips(candidate):
            problem = "a fix produced code that does not parse (a devlint bug); it was not applied"
            return FixResult(path, source, text, diagnostics, applied, problem=problem)
        text, applied = candidate, applied + codes_of(done, chosen)
        diagnostics = lint(text, path)
    problem = f"not rewritten: the fixes did not settle after {MAX_PASSES} passes (a devlint bug)"
    return FixResult(path, source, source, lint(source, path), problem=problem)


def apply_fixes(text: str, fixes: list[SuggestedFix]) -> tuple[str, list[SuggestedFix]]:
    """``text`` with every fix applied that overlaps no earlier one; and those fixes."""
    starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]
    taken: list[tuple[int, int]] = []
    chosen: list[tuple[int, int, str]] = []
    applied: list[SuggestedFix] = []
    ranged = [
        (
            fix,
            [
                (starts[e.line - 1] + e.column, starts[e.end_line - 1] + e.end_column, e.text)
                for e in fix.edits
            ],
        )
        for fix in dict.fromkeys(fixes)  # the same fix found in several contexts: once
    ]
    for fix, edits in sorted(ranged, key=lambda item: min(edit[:2] for edit in item[1])):
        if any(_overlap(start, end, *span) for start, end, _ in edits for span in taken):
            continue
        taken += [(start, end) for start, end, _ in edits]
        chosen += edits
        applied.append(fix)
    for start, end, new in sorted(chosen, reverse=True):
        text = text[:start] + new + text[end:]
    return text, applied


def codes_of(fixes: list[SuggestedFix], found: list[Diagnostic]) -> tuple[str, ...]:
    """The code of each of ``fixes``: that of the first of ``found`` that carries it."""
    code: dict[SuggestedFix | None, str] = {}
    for diagnostic in found:
        code.setdefault(diagnostic.fix, diagnostic.code)
    return tuple(code[fix] for fix in fixes)


def fix_bytes(
    data: bytes,
    path: str,
    settings: Settings = DEFAULT_SETTINGS,
    *,
    unsafe: bool = False,
    importer: FileImporter | None = None,
    linted: list[Diagnostic] | None = None,
) -> FixResult:
    """Decode a file's bytes (PEP 263, BOM) and fix its text (``linted``: see ``fix_source``)."""
    source, problem = decode_source(data)
    if source is None:
        message = f"cannot decode file: {problem} (not analysed)"
        return FixResult(path, "", "", [notice(path, UNREADABLE, message)])
    encoding = tokenize.detect_encoding(BytesIO(data).readline)[0]
    try:
        result = fix_source(source, path, settings, unsafe=unsafe, importer=importer, linted=linted)
    except Exception as error:  # a bug in a fix must not stop the run
        message = f"internal error while fixing: {type(error).__name__}: {error}"
        return FixResult(path, source, source, [notice(path, INTERNAL_ERROR, message)])
    return replace(result, encoding=encoding)


def fix_file(
    path: Path,
    settings: Settings = DEFAULT_SETTINGS,
    *,
    unsafe: bool = False,
    write: bool = True,
    linted: list[Diagnostic] | None = None,
) -> FixResult:
    """Fix one file; with ``write``, rewrite it when anything changed (see ``write_fixed``).
    ``linted``: what linting the file reported already (see ``fix_source``)."""
    fixer = fix_bytes if linted is None else partial(fix_bytes, linted=linted)
    result = fixed_from_file(path, settings, fixer, unsafe=unsafe)
    return write_fixed(path, result) if write else result


def fixed_from_file(
    path: Path, settings: Settings, fixer: Callable[..., FixResult], *, unsafe: bool
) -> FixResult:
    """``path`` read and its bytes fixed by ``fixer`` (``fix_bytes``, or a notebook's) in view
    of its project; not written. An unreadable file gets a DVL002 notice."""
    name = str(path)
    try:
        data = read_regular_file(path)
    except OSError as error:
        return FixResult(name, "", "", [unreadable(name, error)])
    importer = project_importer(path, settings)
    return fixer(data, name, settings, unsafe=unsafe, importer=importer)


def write_fixed(path: Path, result: FixResult, policy: WritePolicy | None = None) -> FixResult:
    """Rewrite the file with ``result``'s fixed text, if it still holds the text that was
    fixed and ``policy`` allows it (by default: files in ``path``'s directory).

    ``devlint check --fix`` computes fixes in worker processes and writes here,
    in the main process: a file is written only when the run has its result
    (so the count of fixes applied is exact, and Ctrl-C never leaves a write
    unreported), and a file edited meanwhile is left alone. A file left alone
    gets a DVL005 notice, and its problems are reported unfixed.
    """
    if not result.changed:
        return result
    policy = policy or WritePolicy.for_paths([path])
    try:
        current = _text_of(path)
        if current == result.fixed:  # fixed already, through another hard link
            return replace(result, source=current)
        if current != result.source:
            raise NotRewritten("the file changed while it was being fixed")
        rewrite(path, result.fixed.encode(result.encoding), policy)
    except (OSError, UnicodeEncodeError, NotRewritten) as error:
        why = f"not rewritten: {getattr(error, 'strerror', None) or error}"
        left = [*result.unfixed, notice(result.path, NOT_REWRITTEN, why)]
        return FixResult(result.path, result.source, result.source, left)
    return result


def _text_of(path: Path) -> str | None:
    return decode_source(read_regular_file(path))[0]


def _overlap(start: int, end: int, other_start: int, other_end: int) -> bool:
    return (start < other_end and other_start < end) or start == other_start


def round_trips(text: str) -> bool:
    """Whether LibCST parses ``text`` and gives it back exactly (fixes trust nothing else)."""
    try:
        return cst.parse_module(text).code == text
    except Exception:  # LibCST raises assorted errors on odd input
        return False


def _lines(text: str) -> list[str]:
    """Lines with their endings, split where LibCST splits them (not at form feeds)."""
    lines, start = [], 0
    for match in _NEWLINE.finditer(text):
        lines.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return lines
