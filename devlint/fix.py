"""Fixes: the helpers rules build them with, and applying them (``devlint check --fix``).

A rule's ``Fix`` replaces the source text of one node; the engine turns it into
line/column edits on the ``Diagnostic``. ``fix_source`` applies every wanted fix
that does not overlap an earlier one, lints the result again and repeats until
nothing is left to fix (ruff's model). A file whose LibCST round trip is not
exact (``module.code != source``, see ECOSYSTEM.md) is never rewritten: its
node texts and positions cannot be trusted.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
import tokenize
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from io import BytesIO
from pathlib import Path

import libcst as cst

from devlint.config import DEFAULT_SETTINGS, Settings
from devlint.core.events import Facts
from devlint.core.syntax import dotted_name
from devlint.decoding import decode_source
from devlint.diagnostic import Diagnostic, SuggestedFix
from devlint.engine import lint_source
from devlint.notices import INTERNAL_ERROR, NOT_REWRITTEN, UNREADABLE, notice
from devlint.reading import read_regular_file
from devlint.safe_write import NotRewritten, WritePolicy, rewrite

MAX_PASSES = 10
ROUND_TRIP = (
    "not rewritten: LibCST does not reproduce this file exactly (a LibCST bug); fix it by hand"
)
_NEWLINE = re.compile(r"\r\n|\r|\n")
_RECEIVERS = (
    cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Dict, cst.Set,
    cst.ListComp, cst.DictComp, cst.SetComp, cst.SimpleString, cst.FormattedString,
)  # fmt: skip
_NESTED_SCOPES = (
    cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
    cst.GeneratorExp,
)  # fmt: skip


# -- building fixes (used by the rules) ------------------------------------------


def receiver_text(facts: Facts, node: cst.BaseExpression) -> str:
    """The source of ``node`` as the receiver of a method call, parenthesised if needed."""
    text = facts.module.code_for_node(node)
    if getattr(node, "lpar", None) or isinstance(node, _RECEIVERS):
        return text
    return f"({text})"


def with_keyword(call: cst.Call, keyword: str, value: str) -> cst.Call | None:
    """``call`` with ``keyword=value`` appended in the call's own layout; None when a
    ``*args``/``**kwargs`` argument may pass it already."""
    if any(arg.star for arg in call.args):
        return None
    no_space = cst.SimpleWhitespace("")
    new = cst.Arg(
        cst.parse_expression(value),
        keyword=cst.Name(keyword),
        equal=cst.AssignEqual(whitespace_before=no_space, whitespace_after=no_space),
    )
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    if len(args) > 1 and isinstance(args[-2].comma, cst.Comma):
        separator = args[-2].comma.whitespace_after  # as between the existing arguments
    elif isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        separator = call.whitespace_before_args  # one argument per line
    else:
        separator = cst.SimpleWhitespace(" ")
    if isinstance(last.comma, cst.Comma):  # a trailing comma stays trailing
        new = new.with_changes(comma=last.comma)
    else:  # what closed the last argument (a newline before ")") now closes the new one
        new = new.with_changes(whitespace_after_arg=last.whitespace_after_arg)
        last = last.with_changes(whitespace_after_arg=no_space)
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=separator))
    return call.with_changes(args=[*args, new])


def ancestors(facts: Facts, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes enclosing ``node``, innermost first (the parent map is built once per file)."""
    table = facts.cache.get("parents")
    if table is None:
        table = facts.cache["parents"] = {
            child: parent for parent, child in _edges(facts.module, lambda node: False)
        }
    while node in table:
        node = table[node]
        yield node


def is_bound_at(facts: Facts, name: str, at: cst.CSTNode) -> bool:
    """Whether the variable ``name`` holds a value where ``at`` runs.

    In the innermost scope it must be a parameter or be assigned before ``at``
    (assigned later, it is an unbound local there); in enclosing functions and
    at module level any binding counts, since they run before the code inside.
    Class bodies do not enclose their methods.
    """
    position = facts.span_of(at)[0]
    innermost = True
    for scope in ancestors(facts, at):
        if not isinstance(scope, cst.FunctionDef | cst.Lambda | cst.ClassDef | cst.Module):
            continue
        if isinstance(scope, cst.ClassDef) and not innermost:
            continue
        bound = _bindings(facts, scope)
        if name in bound:
            return not innermost or bound[name] < position
        innermost = False
    return False


def torch_spelling(facts: Facts, qualname: str) -> str | None:
    """How the file names ``qualname`` through its top-level imports (``torch.nn.ModuleList``
    is ``nn.ModuleList`` after ``from torch import nn``); None when it cannot."""
    best: tuple[int, str] | None = None
    for local, imported in _top_level_imports(facts.module):
        if qualname == imported or qualname.startswith(imported + "."):
            spelled = local + qualname[len(imported) :]
            if best is None or len(imported) > best[0]:
                best = (len(imported), spelled)
    return best[1] if best is not None else None


def statement_indent(facts: Facts, node: cst.CSTNode) -> str | None:
    """The indentation of the line ``node`` starts, when ``node`` is the first thing on it."""
    text = facts.line_before(node)
    return text if not text.strip() else None


def _edges(
    root: cst.CSTNode, stop: Callable[[cst.CSTNode], bool]
) -> Iterator[tuple[cst.CSTNode, cst.CSTNode]]:
    """(parent, child) for every node under ``root``, not below nodes ``stop`` accepts.

    Reads the dataclass fields directly: several times faster than a CSTVisitor.
    """
    stack = [root]
    while stack:
        node = stack.pop()
        for name in _field_names(type(node)):
            value = getattr(node, name)
            for child in value if isinstance(value, list | tuple) else (value,):
                if isinstance(child, cst.CSTNode):
                    yield node, child
                    if not stop(child):
                        stack.append(child)


@functools.cache
def _field_names(node_type: type) -> tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(node_type))


def _bindings(facts: Facts, scope: cst.CSTNode) -> dict[str, tuple[int, int]]:
    """Names a scope binds, each with the position of its first binding."""
    cache = facts.cache.setdefault("bindings", {})
    found = cache.get(scope)
    if found is None:
        names: list[cst.Name] = []
        if isinstance(scope, cst.FunctionDef | cst.Lambda):
            names += [param.name for param in _all_params(scope.params)]
        body = scope if isinstance(scope, cst.Module) else scope.body
        if not isinstance(scope, cst.Lambda):
            for _, node in _edges(body, lambda node: isinstance(node, _NESTED_SCOPES)):
                names += _bound_by(node)
        found = {}
        for name in names:
            found.setdefault(name.value, facts.span_of(name)[0])
        cache[scope] = found
    return found


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    extra = [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return [*params.posonly_params, *params.params, *params.kwonly_params, *extra]


def _bound_by(node: cst.CSTNode) -> list[cst.Name]:
    """The names one node binds in its scope."""
    if isinstance(node, cst.FunctionDef | cst.ClassDef):
        return [node.name]
    if isinstance(node, cst.Assign):
        return [name for target in node.targets for name in target_names(target.target)]
    if isinstance(node, cst.AnnAssign) and node.value is None:
        return []
    if isinstance(node, cst.AnnAssign | cst.AugAssign | cst.For | cst.NamedExpr):
        return target_names(node.target)
    if isinstance(node, cst.WithItem | cst.ExceptHandler):
        alias = node.asname if isinstance(node, cst.WithItem) else node.name
        return target_names(alias.name) if alias is not None else []
    if isinstance(node, cst.Import):
        return [_import_root(alias) for alias in node.names]
    if isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
        return [
            name
            for alias in node.names
            for name in target_names(alias.asname.name if alias.asname else alias.name)
        ]
    return []


def _import_root(alias: cst.ImportAlias) -> cst.Name:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name
    root = alias.name
    while isinstance(root, cst.Attribute):
        root = root.value
    return root


def target_names(node: cst.BaseExpression) -> list[cst.Name]:
    """The variables an assignment or loop target binds (``a, (b, *c)`` → a, b, c)."""
    if isinstance(node, cst.Name):
        return [node]
    if isinstance(node, cst.Tuple | cst.List):
        return [name for element in node.elements for name in target_names(element.value)]
    if isinstance(node, cst.StarredElement):
        return target_names(node.value)
    return []


def _top_level_imports(module: cst.Module) -> Iterator[tuple[str, str]]:
    """(local name, qualified name) for each module-level import."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    name = dotted_name(alias.name)
                    if name is None:
                        continue
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        yield alias.asname.name.value, name
                    else:
                        root = name.split(".", 1)[0]
                        yield root, root
            elif isinstance(small, cst.ImportFrom) and not small.relative:
                source = dotted_name(small.module) if small.module is not None else None
                if source is None or isinstance(small.names, cst.ImportStar):
                    continue
                for alias in small.names:
                    name = dotted_name(alias.name)
                    local = alias.asname.name if alias.asname is not None else alias.name
                    if name is not None and isinstance(local, cst.Name):
                        yield local.value, f"{source}.{name}"


# -- applying fixes ------------------------------------------------------------------


@dataclass(frozen=True)
class FixResult:
    """One file after ``--fix``: its text before and after, and what is left to report."""

    path: str
    source: str
    fixed: str
    diagnostics: list[Diagnostic] = field(default_factory=list)  # left after fixing
    applied: int = 0
    unsafe_left: int = 0  # fixes left that only --unsafe-fixes applies
    problem: str | None = None  # why the file was not (fully) fixed, for stderr
    encoding: str = "utf-8"

    @property
    def changed(self) -> bool:
        return self.fixed != self.source

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
) -> FixResult:
    """Apply the wanted fixes until none is left; never raises."""
    diagnostics = lint_source(source, path, settings)
    if not any(_wanted(d.fix, unsafe) for d in diagnostics):
        return FixResult(path, source, source, diagnostics, 0, _unsafe_left(diagnostics, unsafe))
    if not _round_trips(source):
        return FixResult(path, source, source, diagnostics, problem=ROUND_TRIP)
    text, applied = source, 0
    for _ in range(MAX_PASSES):
        fixes = [d.fix for d in diagnostics if _wanted(d.fix, unsafe)]
        if not fixes:
            return FixResult(
                path, source, text, diagnostics, applied, _unsafe_left(diagnostics, unsafe)
            )
        candidate, count = apply_fixes(text, fixes)
        if not _round_trips(candidate):
            problem = "a fix produced code that does not parse (a devlint bug); it was not applied"
            return FixResult(path, source, text, diagnostics, applied, problem=problem)
        text, applied = candidate, applied + count
        diagnostics = lint_source(text, path, settings)
    problem = f"not rewritten: the fixes did not settle after {MAX_PASSES} passes (a devlint bug)"
    return FixResult(path, source, source, lint_source(source, path, settings), problem=problem)


def apply_fixes(text: str, fixes: list[SuggestedFix]) -> tuple[str, int]:
    """``text`` with every fix applied that overlaps no earlier one; and how many were."""
    starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]
    taken: list[tuple[int, int]] = []
    chosen: list[tuple[int, int, str]] = []
    count = 0
    ranged = [
        [
            (starts[e.line - 1] + e.column, starts[e.end_line - 1] + e.end_column, e.text)
            for e in fix.edits
        ]
        for fix in dict.fromkeys(fixes)  # the same fix found in several contexts: once
    ]
    for edits in sorted(ranged, key=lambda edits: min(edit[:2] for edit in edits)):
        if any(_overlap(start, end, *span) for start, end, _ in edits for span in taken):
            continue
        taken += [(start, end) for start, end, _ in edits]
        chosen += edits
        count += 1
    for start, end, new in sorted(chosen, reverse=True):
        text = text[:start] + new + text[end:]
    return text, count


def fix_bytes(
    data: bytes, path: str, settings: Settings = DEFAULT_SETTINGS, *, unsafe: bool = False
) -> FixResult:
    """Decode a file's bytes (PEP 263, BOM) and fix its text."""
    source, problem = decode_source(data)
    if source is None:
        message = f"cannot decode file: {problem} (not analysed)"
        return FixResult(path, "", "", [notice(path, UNREADABLE, message)])
    encoding = tokenize.detect_encoding(BytesIO(data).readline)[0]
    try:
        result = fix_source(source, path, settings, unsafe=unsafe)
    except Exception as error:  # a bug in a fix must not stop the run
        message = f"internal error while fixing: {type(error).__name__}: {error}"
        return FixResult(path, source, source, [notice(path, INTERNAL_ERROR, message)])
    return replace(result, encoding=encoding)


def fix_file(
    path: Path, settings: Settings = DEFAULT_SETTINGS, *, unsafe: bool = False, write: bool = True
) -> FixResult:
    """Fix one file; with ``write``, rewrite it when anything changed (see ``write_fixed``)."""
    name = str(path)
    try:
        data = read_regular_file(path)
    except OSError as error:
        message = f"cannot read file: {error.strerror or error}"
        return FixResult(name, "", "", [notice(name, UNREADABLE, message)])
    result = fix_bytes(data, name, settings, unsafe=unsafe)
    return write_fixed(path, result, settings) if write else result


def write_fixed(
    path: Path,
    result: FixResult,
    settings: Settings = DEFAULT_SETTINGS,
    policy: WritePolicy | None = None,
) -> FixResult:
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
        left = [*lint_source(result.source, result.path, settings)]
        left.append(notice(result.path, NOT_REWRITTEN, why))
        return FixResult(result.path, result.source, result.source, left)
    return result


def _text_of(path: Path) -> str | None:
    return decode_source(read_regular_file(path))[0]


def _wanted(fix: SuggestedFix | None, unsafe: bool) -> bool:
    return fix is not None and (fix.safe or unsafe)


def _unsafe_left(diagnostics: list[Diagnostic], unsafe: bool) -> int:
    if unsafe:
        return 0
    return sum(1 for d in diagnostics if d.fix is not None and not d.fix.safe)


def _overlap(start: int, end: int, other_start: int, other_end: int) -> bool:
    return (start < other_end and other_start < end) or start == other_start


def _round_trips(text: str) -> bool:
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
