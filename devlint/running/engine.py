"""One file in, diagnostics out: parse, analyse once, run the enabled rules, apply noqa.

Fixes are built only when asked for (``LintReport.fix_for``): building them costs
more than the analysis, and most callers (flake8, the editor's diagnostics) never
show them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from devlint import clash_owners
from devlint.config import DEFAULT_SETTINGS, Settings
from devlint.core.analysis import Facts, analyse
from devlint.core.events import FILE_LAYOUT, Layout
from devlint.core.positions import NotInModule
from devlint.diagnostic import Diagnostic, SuggestedFix
from devlint.inputs.decoding import decode_source
from devlint.inputs.limits import complexity_problem
from devlint.inputs.parse_failures import parse_failure
from devlint.inputs.parsing import parse_module
from devlint.inputs.reading import read_regular_file
from devlint.inputs.tree_cache import TreeCache
from devlint.notices import (
    INTERNAL_ERROR,
    TOO_COMPLEX,
    UNREADABLE,
    notice,
    unreadable,
)
from devlint.project.finder import Project, is_test_module
from devlint.project.index import FileImporter, index_of
from devlint.rule import FixBuilder, Rule
from devlint.rules import all_rules
from devlint.running.gc_thresholds import fewer_collections
from devlint.running.noqa import NOQA, silences
from devlint.selection import is_enabled


@dataclass
class LintReport:
    """One file's diagnostics (their ``fix`` unset) and their fixes, each built on request.

    The report keeps the file's analysis alive so that a fix can be built later,
    e.g. when an editor asks for code actions on the version it published.
    """

    diagnostics: list[Diagnostic] = field(default_factory=list)
    facts: Facts | None = field(default=None, repr=False)
    builders: dict[Diagnostic, FixBuilder] = field(default_factory=dict, repr=False)
    _fixes: dict[Diagnostic, SuggestedFix | None] = field(
        default_factory=dict, init=False, repr=False
    )

    def fix_for(self, diagnostic: Diagnostic) -> SuggestedFix | None:
        """The fix of one of ``diagnostics``, built on the first request and remembered.

        A builder that raises (a bug in a rule) raises here once; the diagnostic
        then has no fix, and the builder is not run again. A fix that would edit
        another file (the origin of a value in an imported module) is not offered.
        """
        if diagnostic not in self._fixes:
            self._fixes[diagnostic] = None
            builder = self.builders.get(diagnostic)
            try:
                fix = builder() if builder is not None else None
                suggestion = fix.suggestion(self.facts) if fix is not None else None
            except NotInModule:
                suggestion = None
            self._fixes[diagnostic] = suggestion
        return self._fixes[diagnostic]

    def with_fixes(self) -> list[Diagnostic]:
        """The diagnostics with every fix built (``devlint check``, ``--fix``)."""
        return [replace(d, fix=self.fix_for(d)) for d in self.diagnostics]


def lint_source(
    source: str,
    path: str = "<stdin>",
    settings: Settings = DEFAULT_SETTINGS,
    *,
    honour_noqa: bool = True,
    fixes: bool = True,
    importer: FileImporter | None = None,
) -> list[Diagnostic]:
    """Diagnostics for one file's text, with their fixes unless ``fixes`` is false.

    Never raises: failures become notices; a fix that fails to build makes the
    whole file a DVL003 notice, as a failing analysis does.
    """
    report = lint_report(source, path, settings, honour_noqa=honour_noqa, importer=importer)
    if not fixes:
        return report.diagnostics
    try:
        return report.with_fixes()
    except Exception as error:  # a bug in a rule's fix must not stop the run
        return [_failure(path, error)]


def lint_report(
    source: str,
    path: str = "<stdin>",
    settings: Settings = DEFAULT_SETTINGS,
    *,
    honour_noqa: bool = True,
    importer: FileImporter | None = None,
    layout: Layout = FILE_LAYOUT,
) -> LintReport:
    """One file's diagnostics, their fixes not built yet. Never raises: failures become notices.

    ``importer`` lets the analysis see the project modules the file imports
    (``project_importer``); without one, what the file imports is unknown.
    ``layout`` says what the user sees of ``source`` (a notebook's cells).
    """
    with fewer_collections():  # the trees this keeps are long-lived
        return _lint_report(source, path, settings, honour_noqa, importer, layout)


def _lint_report(
    source: str,
    path: str,
    settings: Settings,
    honour_noqa: bool,
    importer: FileImporter | None,
    layout: Layout,
) -> LintReport:
    rules = [rule() for rule in all_rules() if _enabled(rule, settings, path)]
    if not rules or "torch" not in source:
        return LintReport()
    problem = complexity_problem(source)  # LibCST could take minutes, gigabytes or crash
    if problem is not None:
        return LintReport([notice(path, TOO_COMPLEX, f"{problem} (skipped)")])
    try:
        module = importer.parse(source) if importer is not None else parse_module(source)
    except Exception as error:  # ParserSyntaxError, and assorted errors on odd input
        return LintReport([parse_failure(path, source, error)])
    try:
        kept = importer.kept_analysis(module) if importer is not None else None
        facts = kept or analyse(module, settings, importer)
        if importer is not None:
            importer.linted(facts)
        facts.layout = layout
        facts.test_module = is_test_module(path)
        clash_owners.assign(facts, {rule.meta.code for rule in rules})
        found = _first_per_place(_diagnostics(facts, rules, path))
    except Exception as error:  # one bad file must not stop the run
        return LintReport([_failure(path, error)])
    diagnostics = list(found)
    if honour_noqa and diagnostics:  # most files: nothing to look up
        diagnostics = _drop_noqa(diagnostics, source)
    builders = {d: found[d] for d in diagnostics if found[d] is not None}
    return LintReport(diagnostics, facts if builders else None, builders)  # facts: for fixes


def project_importer(
    path: Path, settings: Settings, trees: TreeCache | None = None
) -> FileImporter:
    """What the analysis of the file at ``path`` imports from its project, through this
    process's index of that project (which looks for the modules' trees in ``trees``)."""
    return index_of(Project.of(path), settings, trees=trees).importer_for(path)


def lint_file(
    path: Path, settings: Settings = DEFAULT_SETTINGS, display: str | None = None
) -> list[Diagnostic]:
    """Read, decode and lint one file in view of its project; unreadable files become a
    DVL002 notice."""
    return lint_file_in_project(path, settings, display)[0]


def lint_file_in_project(
    path: Path,
    settings: Settings = DEFAULT_SETTINGS,
    display: str | None = None,
    trees: TreeCache | None = None,
) -> tuple[list[Diagnostic], list[tuple[Path, str]]]:
    """``lint_file``, and the other files of the project the result rests on (what the
    file imports, transitively), each with the digest of the bytes the analysis read;
    ``trees``: the parsed trees kept between runs (``project_importer``)."""
    name = display or str(path)
    try:
        data = read_regular_file(path)
    except OSError as error:
        return [unreadable(name, error)], []
    source, problem = decode_source(data)
    if source is None:
        return [notice(name, UNREADABLE, f"cannot decode file: {problem} (not analysed)")], []
    importer = project_importer(path, settings, trees)
    diagnostics = lint_source(source, name, settings, importer=importer)
    return diagnostics, importer.uses()


def _first_per_place(
    found: Iterable[tuple[Diagnostic, FixBuilder | None]],
) -> dict[Diagnostic, FixBuilder | None]:
    """One diagnostic per code and place (a node analysed in several contexts), sorted,
    each with the fix builder of the finding it came from."""
    unique: dict[tuple[int, int, str], tuple[Diagnostic, FixBuilder | None]] = {}
    for diagnostic, builder in found:
        place = (diagnostic.line, diagnostic.column, diagnostic.code)
        unique.setdefault(place, (diagnostic, builder))
    return dict(unique[place] for place in sorted(unique))


def _enabled(rule: type[Rule], settings: Settings, path: str) -> bool:
    return is_enabled(rule.meta.code, rule.meta.default_enabled, settings, path)


def _diagnostics(
    facts: Facts, rules: list[Rule], path: str
) -> Iterator[tuple[Diagnostic, FixBuilder | None]]:
    """Each finding as a diagnostic without its fix, and the builder of that fix."""
    for rule in rules:
        for finding in rule.check(facts):
            try:
                start, end = facts.span_of(finding.node)
            except NotInModule:  # code of another file: its own analysis reports it
                continue
            message = finding.as_message()
            diagnostic = Diagnostic(
                path,
                start[0],
                start[1],
                end[0],
                end[1],
                rule.meta.code,
                message.text,
                finding.severity,
                related=message.cites,
            )
            yield diagnostic, finding.fix


def _failure(path: str, error: Exception) -> Diagnostic:
    """The notice for an analysis or a fix that raised: too deep a file, or a devlint bug."""
    if isinstance(error, RecursionError):
        return notice(path, TOO_COMPLEX, "code nested too deeply to analyse (skipped)")
    return notice(path, INTERNAL_ERROR, f"internal error: {type(error).__name__}: {error}")


def _drop_noqa(diagnostics: list[Diagnostic], source: str) -> list[Diagnostic]:
    lines = source.splitlines()
    kept = []
    for diagnostic in diagnostics:
        text = lines[diagnostic.line - 1] if diagnostic.line <= len(lines) else ""
        match = NOQA.search(text)
        if match is None or not silences(match, diagnostic.code):
            kept.append(diagnostic)
    return kept
