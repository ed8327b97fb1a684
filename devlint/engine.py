"""One file in, diagnostics out: parse, analyse once, run the enabled rules, apply noqa."""

from __future__ import annotations

import re
import tokenize
from io import BytesIO
from pathlib import Path

import libcst as cst

from devlint.config import DEFAULT_SETTINGS, Settings
from devlint.core.analysis import Facts, analyse
from devlint.diagnostic import Diagnostic
from devlint.limits import complexity_problem
from devlint.notices import INTERNAL_ERROR, SYNTAX_ERROR, TOO_COMPLEX, UNREADABLE, notice
from devlint.rule import Rule
from devlint.rules import all_rules
from devlint.selection import is_enabled

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]*(?:[\s,]+[A-Z]+[0-9]*)*))?", re.I)


def lint_source(
    source: str,
    path: str = "<stdin>",
    settings: Settings = DEFAULT_SETTINGS,
    *,
    honour_noqa: bool = True,
) -> list[Diagnostic]:
    """Diagnostics for one file's text. Never raises: failures become notices."""
    rules = [rule() for rule in all_rules() if _enabled(rule, settings, path)]
    if not rules or "torch" not in source:
        return []
    problem = complexity_problem(source)  # LibCST could take minutes, gigabytes or crash
    if problem is not None:
        return [notice(path, TOO_COMPLEX, f"{problem} (skipped)")]
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        message = f"cannot parse: {error.message} (not analysed)"
        return [notice(path, SYNTAX_ERROR, message, error.raw_line, max(error.raw_column, 0))]
    except Exception as error:  # LibCST raises assorted errors on odd input
        return [notice(path, SYNTAX_ERROR, f"cannot parse: {error} (not analysed)")]
    try:
        facts = analyse(module, settings, source)
        diagnostics = _first_per_place(_diagnostics(facts, rules, path))
    except RecursionError:
        return [notice(path, TOO_COMPLEX, "code nested too deeply to analyse (skipped)")]
    except Exception as error:  # one bad file must not stop the run
        message = f"internal error: {type(error).__name__}: {error}"
        return [notice(path, INTERNAL_ERROR, message)]
    if honour_noqa and diagnostics:  # most files: nothing to look up
        diagnostics = _drop_noqa(diagnostics, source)
    return diagnostics


def lint_file(
    path: Path, settings: Settings = DEFAULT_SETTINGS, display: str | None = None
) -> list[Diagnostic]:
    """Read, decode and lint one file; unreadable files become a DVL002 notice."""
    name = display or str(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        return [notice(name, UNREADABLE, f"cannot read file: {error.strerror or error}")]
    source, problem = decode_source(data)
    if source is None:
        return [notice(name, UNREADABLE, f"cannot decode file: {problem} (not analysed)")]
    return lint_source(source, name, settings)


def decode_source(data: bytes) -> tuple[str | None, str]:
    """Text of a Python file (PEP 263 cookie, BOM), or None and the reason."""
    if b"\x00" in data:
        return None, "binary file (contains NUL bytes)"
    try:
        encoding, _ = tokenize.detect_encoding(BytesIO(data).readline)
    except SyntaxError as error:
        return None, str(error)
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as error:
        return None, f"not valid {encoding}: {error}"
    return text.removeprefix("\ufeff"), ""


def _first_per_place(diagnostics) -> list[Diagnostic]:
    """One diagnostic per code and place (a node analysed in several contexts), sorted."""
    unique: dict[tuple[int, int, str], Diagnostic] = {}
    for diagnostic in diagnostics:
        unique.setdefault((diagnostic.line, diagnostic.column, diagnostic.code), diagnostic)
    return [unique[key] for key in sorted(unique)]


def _enabled(rule: type[Rule], settings: Settings, path: str) -> bool:
    return is_enabled(rule.meta.code, rule.meta.default_enabled, settings, path)


def _diagnostics(facts: Facts, rules: list[Rule], path: str):
    for rule in rules:
        for finding in rule.check(facts):
            start, end = facts.span_of(finding.node)
            yield Diagnostic(
                path,
                start[0],
                start[1],
                end[0],
                end[1],
                rule.meta.code,
                finding.message,
                finding.severity,
                finding.fix.suggestion(facts) if finding.fix is not None else None,
            )


def _drop_noqa(diagnostics: list[Diagnostic], source: str) -> list[Diagnostic]:
    lines = source.splitlines()
    kept = []
    for diagnostic in diagnostics:
        text = lines[diagnostic.line - 1] if diagnostic.line <= len(lines) else ""
        match = _NOQA.search(text)
        if match is None:
            kept.append(diagnostic)
            continue
        codes = match.group("codes")
        if codes and not any(
            diagnostic.code.startswith(code.upper()) for code in re.split(r"[\s,]+", codes)
        ):
            kept.append(diagnostic)
    return kept
