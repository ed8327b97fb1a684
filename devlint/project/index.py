"""The modules of a project as the files importing them see them: each read, parsed and
run once per process, and again only when it or a module it imports changes, or when the
process let the project's index go to lint another (``HELD_LINES``).

The analysis of one file asks its ``FileImporter`` for the modules it imports;
the index finds their files (``devlint.project.finder``), runs their top level
(``core.analysis.summarise``) and keeps the result; an imported name a module's top
level never reads is looked up, and its module run, only when an importer reads it or a
function reading it runs. A module that cannot be
read, decoded or parsed, is too complex, or is being imported in a cycle is
not in view: the import stays unknown, as a third-party one does. Editors
hand the index the text of unsaved buffers (``set_text``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

import libcst as cst

from devlint.config import Settings
from devlint.core.analysis import analyse, summarise
from devlint.core.events import AnalysedFile, ArgumentsGiven, Facts
from devlint.core.imports import Given, ModuleScope
from devlint.inputs.decoding import decode_source
from devlint.inputs.limits import complexity_problem
from devlint.inputs.parsing import parse_module
from devlint.inputs.reading import content_digest, read_regular_file
from devlint.inputs.tree_cache import TreeCache
from devlint.project.finder import Project, is_test_module
from devlint.project.mentions import ProjectMentions

MAX_IMPORT_CHAIN = 12
"""Modules whose top levels run one inside another (a imports b imports c…); deeper is unknown."""

KEPT_LINES = 100_000
"""Lines of the files parsed to be linted whose trees wait for a later importer, the most
recent files first: about 130 MB of trees (a LibCST tree takes about 1.3 KB a line). A run
lints a folder in order, and a module is mostly imported by files near it."""

HELD_LINES = 60_000
"""Lines of trees the indexes of one process hold (about 2 KB a line with their analysis).
When a file's lint starts past it, the indexes of other projects go, the least recently used
first: a run lints one project after another, so it seldom comes back to one it left (and
parses its modules again if it does). The index of the file's own project is never dropped:
its modules are what its next files import."""

MAX_CALLER_FILES = 16
"""Files that mention a function analysed at most to learn what its calls give it: a name
more files mention (``step``, ``encode``) is too common to follow (its callers stay unknown)."""

MAX_WRITER_FILES = 16
"""Files that may write checkpoints analysed at most to learn where a load's file comes from:
past it (a project saving everywhere), where the file comes from stays unknown."""
WRITER_NAMES = ("torch", "save")
"""What a file that calls ``torch.save`` mentions (``import torch`` and ``torch.save(...)``)."""

Stamp = tuple[int, int] | str
"""What a module's text was read from: (mtime_ns, size) on disk, or an editor's text."""
T = TypeVar("T")


_INDEXES: dict[tuple[Path, Settings], ProjectIndex] = {}


def refresh_all() -> None:
    """Look at every project's files again (a new run in a process that linted before)."""
    for index in _INDEXES.values():
        index.refresh()


def index_of(
    project: Project,
    settings: Settings,
    let_others_go: bool = True,
    trees: TreeCache | None = None,
) -> ProjectIndex:
    """This process's index of ``project`` (a run, a flake8 process, an editor session), at
    the start of a file's lint: the indexes of other projects go while too many lines are held,
    unless ``let_others_go`` is false (an editor, where the user moves between the projects
    of a workspace and each lint after a move would pay for its imports again). ``trees``:
    where the modules it parses are looked for first and stored (``devlint check``)."""
    key = (project.root, settings)
    index = _INDEXES.pop(key, None) or ProjectIndex(project, settings)
    index.trees = trees
    _INDEXES[key] = index  # the least recently used first
    if not let_others_go:
        return index
    held = sum(other.lines_held for other in _INDEXES.values())
    for other_key in [other for other in _INDEXES if other != key]:
        if held <= HELD_LINES:
            break
        held -= _INDEXES.pop(other_key).lines_held
    return index


@dataclass(eq=False)
class _Kept(Generic[T]):
    """What was learnt from one file's analysis (None: it could not be analysed), and the
    files that analysis read, each with what it was read from (``ProjectIndex._stamp``)."""

    value: T | None
    read: list[tuple[Path, Stamp | None]]


@dataclass(frozen=True)
class Analysed:
    """A whole analysis of one file, with what it rested on: the project files it imported
    and whether it asked what the whole project mentions (``FileImporter.uses``)."""

    facts: Facts
    imported: tuple[Path, ...]
    asked: bool


@dataclass(eq=False)
class _Entry:
    scope: ModuleScope | None
    stamp: Stamp | None
    imports: list[Path]  # project files its names came from (found when run, or when read)
    digest: str = ""  # of the bytes it was read from (``content_digest``)
    text: str | None = None  # what was parsed, so that linting the file itself can reuse it
    lines: int = 0  # of the text parsed, when its tree is held


@dataclass(eq=False)
class ProjectIndex:
    """Summaries of one project's modules, for one set of settings."""

    project: Project
    settings: Settings
    trees: TreeCache | None = None  # the parsed trees kept between runs
    _entries: dict[Path, _Entry] = field(default_factory=dict)
    _texts: dict[Path, str] = field(default_factory=dict)
    _running: list[Path] = field(default_factory=list)
    _checked: set[Path] = field(default_factory=set)  # found current since the last refresh
    _linted: dict[Path, tuple[str, cst.Module, int]] = field(default_factory=dict)  # KEPT_LINES
    _linted_lines: int = 0
    _module_lines: int = 0  # of the modules in ``_entries``
    mentions: ProjectMentions | None = None  # made at the first question
    _calls: dict[Path, _Kept[list[ArgumentsGiven]]] = field(default_factory=dict)
    """The calls each file's code makes, as of the files its analysis read."""
    _writers: dict[Path, _Kept[Analysed]] = field(default_factory=dict)
    """The analyses of files that may write checkpoints, as of the files they read: made
    for another file's question or kept from the file's own lint, whichever came first, and
    shared by both (a writer is analysed once per run)."""

    def mentioned(self, name: str) -> bool | None:
        """Whether the project's code mentions ``name`` (``ProjectMentions``)."""
        return self._mentions().mentioned(name)

    def calls_into(self, path: Path, name: str, line: int) -> list[Given] | None:
        """What the calls of the function ``name`` defined at ``line`` of ``path`` give it,
        in every other file that mentions the name: each such file is analysed (again only
        when it or what it imports changed). None when some file that may call it cannot be.
        Test modules are
        left out: a test runs the code on the CPU of whatever machine runs the suite, which
        says nothing of the device the code is meant for."""
        files = self._mentions().mentioning(name)
        if files is None or len(files) > MAX_CALLER_FILES:
            return None
        found: list[Given] = []
        for caller in files:
            if caller == path or is_test_module(str(caller)):
                continue
            calls = self._calls_made_by(caller)
            if calls is None:
                return None
            for call in calls:
                callee = call.callee
                home = callee.home
                if (
                    callee.name == name
                    and home is not None
                    and home.path == str(path)
                    and home.line_of(callee.node) == line
                ):
                    found.append(call.given)
        return found

    def checkpoint_writers(self, path: Path) -> list[AnalysedFile] | None:
        """The analyses of the files other than ``path`` whose code may write checkpoints
        (it names ``torch`` and ``save``), each analysed again only when it or what it
        imports changed. Test modules are left out (a test writes files for itself). None
        when too many files may write, or one of them cannot be analysed."""
        files = self._mentions().mentioning_all(WRITER_NAMES)
        if files is None:
            return None
        writers = [file for file in files if file != path and not is_test_module(str(file))]
        if len(writers) > MAX_WRITER_FILES:
            return None
        found = []
        for writer in writers:
            facts = self._analysis_of(writer)
            if facts is None:
                return None
            found.append(AnalysedFile(self._name(writer), str(writer), facts))
        return found

    def _analysis_of(self, path: Path) -> Facts | None:
        analysed = self._kept_or_analysed(
            self._writers,
            path,
            lambda facts, importer: Analysed(facts, tuple(importer.files), importer.asked),
        )
        return analysed.facts if analysed is not None else None

    def kept_analysis(self, path: Path, module: cst.Module | None = None) -> Analysed | None:
        """The analysis of ``path`` kept as a checkpoint writer's, while nothing it read
        changed (and made of ``module``, when given): what its own lint can take."""
        kept = self._writers.get(path)
        if kept is None or kept.value is None or not self._fresh(kept):
            return None
        if module is not None and kept.value.facts.module is not module:
            return None
        return kept.value

    def note_analysis(self, path: Path, analysed: Analysed) -> None:
        """The lint of ``path`` analysed it: the calls it makes, and, when it may write
        checkpoints that another file's lint will ask about, the whole analysis, are known
        without analysing it again."""
        stamps = self._stamps(path, list(analysed.imported))
        self._calls[path] = _Kept(analysed.facts.of(ArgumentsGiven), stamps)
        if path in self._checkpoint_writer_files():
            self._writers[path] = _Kept(analysed, stamps)

    def _checkpoint_writer_files(self) -> frozenset[Path]:
        """The files whose analyses ``checkpoint_writers`` would ask for (reading what the
        project mentions costs a fraction of a second, once per run, and most runs read it
        anyway)."""
        files = self._mentions().mentioning_all(WRITER_NAMES)
        writers = frozenset(file for file in files or () if not is_test_module(str(file)))
        return writers if len(writers) <= MAX_WRITER_FILES + 1 else frozenset()  # one: the asker

    def _fresh(self, kept: _Kept[T]) -> bool:
        return all(self._stamp(file) == stamp for file, stamp in kept.read)

    def _calls_made_by(self, path: Path) -> list[ArgumentsGiven] | None:
        """The calls ``path``'s code makes (a file devlint cannot parse or analyse calls
        nothing it knows of)."""
        return self._kept_or_analysed(self._calls, path, lambda facts, _: facts.of(ArgumentsGiven))

    def _kept_or_analysed(
        self,
        kept: dict[Path, _Kept[T]],
        path: Path,
        learn: Callable[[Facts, FileImporter], T],
    ) -> T | None:
        """What ``learn`` takes from ``path``'s analysis (and the importer it read through),
        analysed again only when it or a file its analysis read changed (an editor asks at
        every lint); None, until it changes, when it cannot be parsed or analysed. The tree
        waits for the file's own lint, which then parses it no more."""
        known = kept.get(path)
        if known is not None and self._fresh(known):
            return known.value
        kept[path] = _Kept(None, [])  # reached again while it is analysed: unknown
        module, _, source = self._parse(path)
        if module is not None and source is not None:
            self._keep(path, source, module)
        importer = self.importer_for(path)
        value = None
        with contextlib.suppress(Exception):
            if module is not None:
                value = learn(analyse(module, self.settings, importer), importer)
        kept[path] = _Kept(value, self._stamps(path, importer.files))
        return value

    def _stamps(self, path: Path, imported: list[Path]) -> list[tuple[Path, Stamp | None]]:
        """``path`` and the modules its analysis read, each with what it was read from."""
        used = [file for file, _ in self.files_used(imported)]
        return [(file, self._stamp(file)) for file in dict.fromkeys([path, *used])]

    def _mentions(self) -> ProjectMentions:
        if self.mentions is None:
            self.mentions = ProjectMentions(self.project.root)
        return self.mentions

    @property
    def lines_held(self) -> int:
        """Lines of the trees the index holds: modules run for importers, and linted files
        kept for importers still to come."""
        return self._module_lines + self._linted_lines

    @property
    def modules_run(self) -> int:
        """How many modules the index has read and run (whether or not now in view)."""
        return len(self._entries)

    def importer_for(self, path: Path) -> FileImporter:
        """What the analysis of ``path`` asks for the modules it imports."""
        return FileImporter(self, Path(os.path.abspath(path)))

    def set_text(self, path: Path, text: str | None) -> None:
        """An editor's unsaved text of ``path`` (None: the file on disk again)."""
        path = Path(os.path.abspath(path))
        if text is None:
            self._texts.pop(path, None)
        else:
            self._texts[path] = text
        self.refresh()

    def set_texts(self, texts: dict[Path, str]) -> None:
        """The editor's open documents: their text counts, not the files on disk."""
        self._texts = {Path(os.path.abspath(path)): text for path, text in texts.items()}
        self.refresh()

    def refresh(self) -> None:
        """Look at the files again: a module is checked for changes once between refreshes
        (a run of ``devlint check`` never refreshes; an editor does before each lint)."""
        self._checked.clear()
        if self.mentions is not None:
            self.mentions.forget()

    def scope(self, path: Path) -> ModuleScope | None:
        """The module in ``path`` after its top level ran; None when not in view."""
        if path in self._running or len(self._running) >= MAX_IMPORT_CHAIN:
            return None  # an import cycle, or a chain too long: unknown
        entry = self._entries.get(path)
        if entry is None or (path not in self._checked and not self._current(path, entry, set())):
            if entry is not None:
                self._module_lines -= entry.lines
            entry = self._summarise(path)
            self._entries[path] = entry
            self._module_lines += entry.lines
        self._checked.add(path)
        return entry.scope

    def files_used(self, imported: list[Path]) -> list[tuple[Path, str]]:
        """The files ``imported`` and everything their top levels imported, once each, with
        the digest of the content the analysis read."""
        found: dict[Path, None] = {}
        todo = list(imported)
        while todo:
            path = todo.pop()
            if path in found:
                continue
            found[path] = None
            entry = self._entries.get(path)
            if entry is not None:
                todo.extend(entry.imports)
        return [(path, self._entries[path].digest) for path in found if path in self._entries]

    def _current(self, path: Path, entry: _Entry, seen: set[Path]) -> bool:
        """Whether ``entry`` still describes ``path``: neither it nor what it imports changed."""
        if path in seen or path in self._checked:
            return True
        seen.add(path)
        if self._stamp(path) != entry.stamp:
            return False
        return all(  # an import with no entry was in a cycle: it was unknown, and still is
            imported not in self._entries or self._current(imported, self._entries[imported], seen)
            for imported in entry.imports
        )

    def _stamp(self, path: Path) -> Stamp | None:
        if path in self._texts:
            return self._texts[path]
        try:
            status = os.stat(path)
        except OSError:
            return None
        return (status.st_mtime_ns, status.st_size)

    def _summarise(self, path: Path) -> _Entry:
        stamp = self._stamp(path)
        module, digest, text = self._parse(path)
        if module is None:
            return _Entry(None, stamp, [], digest)
        scope = ModuleScope(self._name(path), module, str(path), submodule=self._submodules(path))
        importer = self.importer_for(path)
        self._running.append(path)
        try:
            summarise(scope, self.settings, importer)
        except Exception:  # a module devlint cannot run stays unknown
            return _Entry(None, stamp, importer.files, digest)
        finally:
            self._running.pop()
        lines = 0 if text is None else text.count("\n") + 1
        return _Entry(scope, stamp, importer.files, digest, text, lines)

    def parse(self, path: Path, source: str) -> cst.Module:
        """The module of ``path`` parsed from ``source``: the tree an importer had parsed
        already, or a new one kept for importers still to come (only the last ``KEPT_LINES``
        lines wait, so a module imported long after it was linted is parsed again)."""
        path = Path(os.path.abspath(path))
        entry = self._entries.get(path)
        if entry is not None and entry.scope is not None and entry.text == source:
            return entry.scope.module
        kept = self._linted.get(path)
        if kept is not None and kept[0] == source:
            return kept[1]  # parsed for another file's question (a checkpoint writer)
        module = parse_module(source)
        self._keep(path, source, module)
        return module

    def _keep(self, path: Path, source: str, module: cst.Module) -> None:
        self._drop(path)
        lines = source.count("\n") + 1
        self._linted[path] = (source, module, lines)
        self._linted_lines += lines
        while self._linted_lines > KEPT_LINES and len(self._linted) > 1:
            self._drop(next(iter(self._linted)))

    def _drop(self, path: Path) -> tuple[str, cst.Module, int] | None:
        kept = self._linted.pop(path, None)
        if kept is not None:
            self._linted_lines -= kept[2]
        return kept

    def _parse(self, path: Path) -> tuple[cst.Module | None, str, str | None]:
        """The module in ``path`` (None when it cannot be had), the digest of its bytes and
        the text parsed."""
        source = self._texts.get(path)
        if source is not None:
            digest = content_digest(source.encode("utf-8", "surrogatepass"))
        else:
            try:
                data = read_regular_file(path)
            except OSError:
                return None, "", None
            source, digest = decode_source(data)[0], content_digest(data)
        if source is None or complexity_problem(source) is not None:
            return None, digest, None
        kept = self._drop(path)
        if kept is not None and kept[0] == source:
            return kept[1], digest, source
        module = self.trees.get(source) if self.trees is not None else None
        if module is None:
            try:
                module = parse_module(source)
            except Exception:  # LibCST raises assorted errors on odd input
                return None, digest, None
            if self.trees is not None:
                self.trees.put(source, module)
        return module, digest, source

    def _name(self, path: Path) -> str:
        """How messages name the file: its path from the project root."""
        try:
            return path.relative_to(self.project.root).as_posix()
        except ValueError:
            return path.name

    def _submodules(self, path: Path):
        def submodule(name: str) -> ModuleScope | None:
            found = self.project.submodule_file(path, name)
            if found is None:
                return None
            found = Path(os.path.abspath(found))
            entry = self._entries.get(path)
            if entry is not None and found not in entry.imports:
                entry.imports.append(found)  # what depends on the package depends on it
            return self.scope(found)

        return submodule


@dataclass(eq=False)
class FileImporter:
    """The imports of one file: ``module(name, level)`` as ``core.imports.Importer`` asks."""

    index: ProjectIndex
    path: Path
    files: list[Path] = field(default_factory=list)  # the project files it imported
    asked: bool = False  # whether the analysis asked what the project mentions

    def parse(self, source: str) -> cst.Module:
        """The importing file's own module, parsed once per run (``ProjectIndex.parse``)."""
        return self.index.parse(self.path, source)

    def uses(self) -> list[tuple[Path, str]]:
        """The project files the importing file's analysis rests on, with their digests."""
        used = self.index.files_used(self.files)
        if self.asked and self.index.mentions is not None:
            seen = {path for path, _ in used}
            used += [use for use in self.index.mentions.files() if use[0] not in seen]
        return used

    def mentions(self, name: str) -> bool | None:
        """Whether the project's code mentions ``name``; the answer rests on every file."""
        self.asked = True
        return self.index.mentioned(name)

    def calls_into(self, name: str, line: int) -> list[Given] | None:
        """What calls in the project's other files give this file's function ``name`` at
        ``line``; the answer rests on every file."""
        self.asked = True
        return self.index.calls_into(self.path, name, line)

    def checkpoint_writers(self) -> list[AnalysedFile] | None:
        """The analyses of the project's other files that may write checkpoints; the answer
        rests on every file."""
        self.asked = True
        return self.index.checkpoint_writers(self.path)

    def kept_analysis(self, module: cst.Module) -> Facts | None:
        """The importing file's analysis of ``module``, when the index already made it
        (a checkpoint writer's, for another file's lint); it then rests on what that
        analysis rested on."""
        kept = self.index.kept_analysis(self.path, module)
        if kept is None:
            return None
        self.files = list(kept.imported)
        self.asked = self.asked or kept.asked
        return kept.facts

    def linted(self, facts: Facts) -> None:
        """The importing file's analysis is done: what other files' lints ask of it is known
        without analysing it again."""
        self.index.note_analysis(self.path, Analysed(facts, tuple(self.files), self.asked))

    def module(self, name: str, level: int, folders: tuple[str, ...] = ()) -> ModuleScope | None:
        found = self.index.project.module_file(self.path, name, level, folders)
        if found is None or os.path.abspath(found) == str(self.path):
            return None
        found = Path(os.path.abspath(found))
        if found not in self.files:
            self.files.append(found)
        return self.index.scope(found)
