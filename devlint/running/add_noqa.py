"""``devlint check --add-noqa``: a ``# noqa: CODE`` comment on every line with a finding.

As ruff's: the comment goes at the end of the line a finding starts on (where
the engine looks for it), naming the codes found there, sorted. A line that
has a ``# noqa: E501`` gets the codes added to it (``# noqa: E501, DVL101``);
another comment is kept, the new one after it. A line whose end lies inside a
string (a triple-quoted string goes on) or that ends in a backslash cannot
take a comment: it is left as it is and named. The result is linted again and
written only if the comments silence what they name and the code still
parses; it is written as ``--fix`` writes (``devlint.running.fix.write_fixed``):
the same refusals, line endings and encoding kept.
"""

from __future__ import annotations

import io
import re
import token
import tokenize
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from devlint.config import Settings
from devlint.diagnostic import Diagnostic
from devlint.inputs.decoding import decode_source
from devlint.notices import INTERNAL_ERROR, NOTICE_SUMMARIES, SYNTAX_ERROR, UNREADABLE, notice
from devlint.project.index import FileImporter
from devlint.running.engine import lint_source
from devlint.running.fix import FixResult, fixed_from_file
from devlint.running.noqa import NOQA

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")
_OPENS = {
    getattr(token, name) for name in ("FSTRING_START", "TSTRING_START") if hasattr(token, name)
}
_CLOSES = {getattr(token, name) for name in ("FSTRING_END", "TSTRING_END") if hasattr(token, name)}
"""Python 3.12 and later read an f-string (3.14 a t-string) as several tokens."""


def add_noqa_file(path: Path, settings: Settings) -> FixResult:
    """The file at ``path`` with its ``# noqa`` comments, not written (``write_fixed``
    writes it); ``fixed_codes`` holds the code of each finding silenced."""
    return fixed_from_file(path, settings, add_noqa_bytes, unsafe=False)


def add_noqa_bytes(
    data: bytes,
    path: str,
    settings: Settings,
    *,
    unsafe: bool = False,  # what fixed_from_file passes a fixer
    importer: FileImporter | None = None,
) -> FixResult:
    """A file's bytes with ``# noqa`` comments added; never raises."""
    source, problem = decode_source(data)
    if source is None:
        return FixResult(path, "", "", [notice(path, UNREADABLE, f"cannot decode file: {problem}")])
    encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]

    def lint(text: str) -> list[Diagnostic]:
        return lint_source(text, path, settings, importer=importer)

    try:
        result = _silenced(source, path, lint)
    except Exception as error:  # a bug must not stop the run
        message = f"internal error while adding # noqa: {type(error).__name__}: {error}"
        return FixResult(path, source, source, [notice(path, INTERNAL_ERROR, message)])
    return replace(result, encoding=encoding)


def _silenced(source: str, path: str, lint: Callable[[str], list[Diagnostic]]) -> FixResult:
    found = lint(source)
    findings = [d for d in found if d.code not in NOTICE_SUMMARIES]
    if not findings:
        return FixResult(path, source, source, found)
    try:
        text, skipped = with_noqa(source, findings)
    except (SyntaxError, tokenize.TokenError) as error:  # LibCST parsed what Python does not
        why = f"no # noqa added: Python's tokenizer cannot read the file ({error})"
        return FixResult(path, source, source, found, problem=why)
    problem = "; ".join(f"no # noqa on line {line}: {why}" for line, why in skipped.items())
    if text == source:
        return FixResult(path, source, source, found, problem=problem or None)
    left = lint(text)
    silenced = [d for d in findings if d.line not in skipped]
    still = {(d.line, d.code) for d in left} & {(d.line, d.code) for d in silenced}
    if still or any(d.code == SYNTAX_ERROR for d in left):
        what = "silence what they name" if still else "leave code that parses"
        why = f"not rewritten: the # noqa comments would not {what} (a devlint bug)"
        return FixResult(path, source, source, found, problem=why)
    codes = tuple(d.code for d in silenced)
    return FixResult(path, source, text, left, codes, problem=problem or None, unfixed=found)


def with_noqa(source: str, findings: Sequence[Diagnostic]) -> tuple[str, dict[int, str]]:
    """``source`` with a ``# noqa`` comment on each line a finding starts on, and why a
    line was left without one (``{7: "it ends inside a string"}``). Raises what Python's
    tokenizer raises on code it cannot read."""
    lines = _LINE.findall(source)[:-1] or [""]  # the pattern also matches the empty end
    layout = _Layout.of(source)
    codes: dict[int, set[str]] = defaultdict(set)
    for d in findings:
        codes[d.line].add(d.code)
    skipped = {}
    for number, wanted in sorted(codes.items()):
        if not 0 < number <= len(lines):
            continue
        why = layout.no_comment_on(number, lines[number - 1])
        if why is not None:
            skipped[number] = why
            continue
        lines[number - 1] = _commented(lines[number - 1], layout.comments.get(number), wanted)
    return "".join(lines), skipped


def _commented(line: str, comment_at: int | None, codes: set[str]) -> str:
    """``line`` (with its ending) whose comment names ``codes`` too."""
    body = line.rstrip("\r\n")
    ending = line[len(body) :]
    if comment_at is not None:
        match = NOQA.search(body, comment_at)
        if match is not None and match.group("codes"):  # a list of codes already: add to it
            end = match.end("codes")
            return f"{body[:end]}, {', '.join(sorted(codes))}{body[end:]}{ending}"
    code = body.rstrip(" \t")
    return f"{code}  # noqa: {', '.join(sorted(codes))}{ending}"


class _Layout:
    """Where Python's tokenizer sees comments and strings: what a line's end lies in."""

    def __init__(self, comments: dict[int, int], in_string: set[int]) -> None:
        self.comments = comments  # line -> column of its comment
        self.in_string = in_string  # lines whose end is inside a string

    @classmethod
    def of(cls, source: str) -> _Layout:
        comments: dict[int, int] = {}
        in_string: set[int] = set()
        opened: list[int] = []  # lines where the f-strings being read started
        readline = io.StringIO(source, newline=None).readline  # \r and \r\n end lines too
        for kind, _, start, end, _ in tokenize.generate_tokens(readline):
            if kind == token.COMMENT:
                comments[start[0]] = start[1]
            elif kind == token.STRING:
                in_string.update(range(start[0], end[0]))
            elif kind in _OPENS:
                opened.append(start[0])
            elif kind in _CLOSES and opened:
                in_string.update(range(opened.pop(), end[0]))
        return cls(comments, in_string)

    def no_comment_on(self, number: int, line: str) -> str | None:
        """Why line ``number`` cannot end in a comment, or None."""
        if number in self.in_string:
            return "it ends inside a string"
        if number not in self.comments and line.rstrip("\r\n").rstrip(" \t").endswith("\\"):
            return "it ends in a backslash that continues it"
        return None
