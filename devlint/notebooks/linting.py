"""The engine for a notebook: its program linted once, each finding moved to its cell.

A cell that does not parse (a syntax error, IPython syntax devlint does not
know) gets a DVL001 notice at its line and is left out, as Jupyter runs each
cell on its own; the rest of the notebook is still analysed. A file that is
not an nbformat 4 notebook gets a DVL002 notice: never "no problems".
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from devlint.config import Settings
from devlint.diagnostic import Diagnostic, SourceEdit, SuggestedFix
from devlint.inputs.parse_failures import parse_failure
from devlint.inputs.parsing import parse_module
from devlint.inputs.reading import read_regular_file
from devlint.inputs.tree_cache import TreeCache
from devlint.notebooks.program import Program, cell_code, program_of
from devlint.notebooks.reading import Notebook, NotebookError, read_notebook
from devlint.notices import (
    INTERNAL_ERROR,
    PARSER_LIMITATION,
    SYNTAX_ERROR,
    TOO_COMPLEX,
    UNREADABLE,
    notice,
    unreadable,
)
from devlint.project.index import FileImporter
from devlint.running.engine import LintReport, lint_report, project_importer


def lint_notebook_file(
    path: Path, settings: Settings, display: str | None = None, trees: TreeCache | None = None
) -> tuple[list[Diagnostic], list[tuple[Path, str]]]:
    """``engine.lint_file_in_project`` for a notebook: its diagnostics by cell, and the
    project files they rest on."""
    name = display or str(path)
    try:
        data = read_regular_file(path)
    except OSError as error:
        return [unreadable(name, error)], []
    importer = project_importer(path, settings, trees)
    notebook = read_or_notice(data, name)
    if isinstance(notebook, Diagnostic):
        return [notebook], []
    return lint_notebook(notebook, name, settings, importer=importer), importer.uses()


def read_or_notice(data: bytes, name: str) -> Notebook | Diagnostic:
    """The notebook in ``data``, or the notice that says why it cannot be read."""
    try:
        return read_notebook(data)
    except NotebookError as error:
        return notice(name, UNREADABLE, f"cannot read notebook: {error} (not analysed)")


@dataclass
class CellReport:
    """A notebook's diagnostics at their cells, and their fixes, each built on request
    (as ``engine.LintReport``: an editor asks for few)."""

    diagnostics: list[Diagnostic]
    program: Program
    report: LintReport
    linted: dict[Diagnostic, Diagnostic] = field(default_factory=dict)  # -> the program's

    def fix_for(self, diagnostic: Diagnostic) -> SuggestedFix | None:
        """The fix of one of ``diagnostics`` in its cell's lines; None if it has none, or if
        it would edit another cell or an IPython line."""
        linted = self.linted.get(diagnostic)
        fix = self.report.fix_for(linted) if linted is not None else None
        if fix is None or diagnostic.cell is None:
            return None
        return _fix_in_cell(fix, self.program, diagnostic.cell)

    def with_fixes(self) -> list[Diagnostic]:
        return [replace(d, fix=self.fix_for(d)) for d in self.diagnostics]


def lint_notebook(
    notebook: Notebook,
    name: str,
    settings: Settings,
    *,
    importer: FileImporter | None = None,
) -> list[Diagnostic]:
    """The notebook's diagnostics, each at its cell and line, with its fix."""
    report = notebook_report(notebook, name, settings, importer=importer)
    try:
        return report.with_fixes()
    except Exception as error:  # a bug in a rule's fix must not stop the run
        return [notice(name, INTERNAL_ERROR, f"internal error: {type(error).__name__}: {error}")]


def notebook_report(
    notebook: Notebook, name: str, settings: Settings, *, importer: FileImporter | None = None
) -> CellReport:
    """The notebook's diagnostics at their cells, fixes not built yet. A notebook whose
    kernel is not Python has none."""
    program, unparsed = program_of(notebook), []
    if notebook.language not in (None, "python"):
        return CellReport([], program, LintReport())

    def report_on(program: Program) -> LintReport:
        return lint_report(program.text, name, settings, importer=importer, layout=program)

    report = report_on(program)
    if any(d.code in (SYNTAX_ERROR, PARSER_LIMITATION) for d in report.diagnostics):
        program, unparsed = _without_unparsable(program, name)
        report = report_on(program)
    linted = {in_cell(d, program): d for d in report.diagnostics}
    return CellReport(unparsed + list(linted), program, report, linted)


def in_cell(d: Diagnostic, program: Program) -> Diagnostic:
    """A diagnostic of the program at its cell and line; a notice about the whole program
    stays at 1:1 of the notebook."""
    if not program.places or d.code in (INTERNAL_ERROR, TOO_COMPLEX):
        return d
    cell, line = program.place(d.line)
    end_cell, end_line = program.place(d.end_line)
    indent = program.indents.get(cell, 0)
    column, end_column = d.column + indent, d.end_column + indent
    end = (end_line, end_column) if end_cell == cell else (line, column)
    return replace(d, line=line, column=column, end_line=end[0], end_column=end[1], cell=cell)


def _fix_in_cell(fix: SuggestedFix, program: Program, cell: int) -> SuggestedFix | None:
    """The fix with cell lines; None if it would edit another cell or an IPython line, or
    add lines to a cell IPython dedents."""
    lines = program.lines
    originals = {c.number: c.source.split("\n") for c in program.cells}
    indent = program.indents.get(cell, 0)
    edits = []
    for edit in fix.edits:
        start_cell, start = program.place(edit.line)
        end_cell, end = program.place(edit.end_line)
        if start_cell != cell or end_cell != cell or (indent and "\n" in edit.text):
            return None
        for number, in_cell_line in ((edit.line, start), (edit.end_line, end)):
            original = originals[cell][in_cell_line - 1][indent:]
            if lines[number - 1].rstrip("\r") != original.rstrip("\r"):
                return None  # a line made inert: its text is not the cell's
        column, end_column = edit.column + indent, edit.end_column + indent
        edits.append(SourceEdit(start, column, end, end_column, edit.text))
    return replace(fix, edits=tuple(edits))


def _without_unparsable(program: Program, name: str) -> tuple[Program, list[Diagnostic]]:
    """The program without the cells that do not parse on their own, and a notice for each
    (cells are parsed one by one only when the whole program does not parse)."""
    notices = []
    for cell in program.cells:
        code = cell_code(cell.source)[0]
        try:
            parse_module(code)
        except Exception as error:  # ParserSyntaxError, and assorted errors on odd input
            failure = parse_failure(name, code, error, f"cell {cell.number}")
            notices.append(replace(failure, cell=cell.number))
            program = program.without(cell.number)
    return program, notices
