"""``--fix`` for a notebook: fixes applied to the sources of the cells they belong to.

As for a Python file (``devlint.running.fix``), wanted fixes that do not overlap are
applied, the notebook is linted again, and this repeats until nothing is left
to fix. The result's texts are the whole notebook file's, before and after,
so ``--diff`` shows the changed source lines and ``write_fixed`` writes the
file only if it still holds what was fixed. A cell whose fixed code would not
parse is never written.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from devlint.config import Settings
from devlint.diagnostic import Diagnostic
from devlint.notebooks.linting import lint_notebook, read_or_notice
from devlint.notebooks.program import cell_code
from devlint.notebooks.reading import Notebook, notebook_of_text
from devlint.notebooks.writing import with_sources
from devlint.notices import INTERNAL_ERROR, notice
from devlint.project.index import FileImporter
from devlint.running.fix import (
    MAX_PASSES,
    ROUND_TRIP,
    FixResult,
    apply_fixes,
    codes_of,
    fixed_from_file,
    round_trips,
)
from devlint.running.fix_count import unsafe_left, wanted

_BOM = b"\xef\xbb\xbf"


def fix_notebook_file(path: Path, settings: Settings, *, unsafe: bool) -> FixResult:
    """The notebook at ``path`` fixed, not written (``devlint.running.fix.write_fixed`` does)."""
    return fixed_from_file(path, settings, fix_notebook_bytes, unsafe=unsafe)


def fix_notebook_bytes(
    data: bytes,
    name: str,
    settings: Settings,
    *,
    unsafe: bool = False,
    importer: FileImporter | None = None,
) -> FixResult:
    """A notebook's bytes fixed; never raises."""
    notebook = read_or_notice(data, name)
    if isinstance(notebook, Diagnostic):
        return FixResult(name, "", "", [notebook])
    try:
        result = _fixed(notebook, name, settings, unsafe, importer)
    except Exception as error:  # a bug in a fix must not stop the run
        message = f"internal error while fixing: {type(error).__name__}: {error}"
        text = notebook.text
        return FixResult(name, text, text, [notice(name, INTERNAL_ERROR, message)])
    return replace(result, encoding="utf-8-sig" if data.startswith(_BOM) else "utf-8")


def _fixed(
    notebook: Notebook, name: str, settings: Settings, unsafe: bool, importer: FileImporter | None
) -> FixResult:
    def lint(notebook: Notebook) -> list[Diagnostic]:
        return lint_notebook(notebook, name, settings, importer=importer)

    source = notebook.text
    unfixed = diagnostics = lint(notebook)
    applied: tuple[str, ...] = ()
    for _ in range(MAX_PASSES):
        chosen = [d for d in diagnostics if wanted(d.fix, unsafe) and d.cell is not None]
        if not chosen:
            left = unsafe_left(diagnostics, unsafe)
            return FixResult(
                name, source, notebook.text, diagnostics, applied, left, unfixed=unfixed
            )
        sources: dict[int, str] = {}
        done: tuple[str, ...] = ()
        for cell in notebook.code_cells:
            fixes = [d.fix for d in chosen if d.cell == cell.number and d.fix is not None]
            if fixes and not round_trips(cell_code(cell.source)[0]):
                return FixResult(
                    name, source, notebook.text, diagnostics, applied, problem=ROUND_TRIP
                )
            if fixes:
                sources[cell.number], fixed = apply_fixes(cell.source, fixes)
                done += codes_of(fixed, chosen)
        if not all(round_trips(cell_code(text)[0]) for text in sources.values()):
            problem = "a fix produced code that does not parse (a devlint bug); it was not applied"
            return FixResult(name, source, notebook.text, diagnostics, applied, problem=problem)
        notebook = notebook_of_text(with_sources(notebook, sources))
        applied += done
        diagnostics = lint(notebook)
    problem = f"not rewritten: the fixes did not settle after {MAX_PASSES} passes (a devlint bug)"
    return FixResult(name, source, source, unfixed, problem=problem)
