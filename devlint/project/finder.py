"""The project a file belongs to: its root, and which of the project's files an import names.

Resolution follows Python's import system statically, without running anything
or reading ``sys.path``: an absolute import is looked up in the folders a
program of the project would have on its path (the importing file's own
folder, as for a script; the project root, as for ``python -m``; the root's
``src/``), a relative import in the importing file's package. Only files
inside the project resolve: the standard library, installed packages and
whatever is not found stay unknown (None), never "on the CPU".
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
"""What marks a project's root folder, nearest first."""
MAX_IMPORT_PARTS = 32
"""Dotted names longer than this are not looked up (no real import has that many parts)."""


def project_root(path: Path) -> Path:
    """The nearest folder at or above ``path`` (a file or a folder) holding a root marker;
    without one, the file's own folder."""
    start = Path(os.path.abspath(path))
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        if any(os.path.exists(candidate / marker) for marker in ROOT_MARKERS):
            return candidate
    return folder


def is_test_module(path: str) -> bool:
    """Whether pytest collects the file by its default ``python_files`` (``test_*.py``,
    ``*_test.py``): such a module is run, not imported by the project's other files."""
    name = os.path.basename(path)
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


@dataclass
class Project:
    """The files of one project, as imports name them. Lookups are cached per folder."""

    root: Path
    _real_root: str = field(init=False, repr=False)
    _found: dict[tuple[str, str, int, tuple[str, ...]], Path | None] = field(
        default_factory=dict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        self.root = Path(os.path.abspath(self.root))
        self._real_root = os.path.realpath(self.root)

    @classmethod
    def of(cls, path: Path) -> Project:
        """The project ``path`` belongs to."""
        return cls(project_root(path))

    def search_path(self, importer: Path, added: tuple[str, ...] = ()) -> tuple[Path, ...]:
        """Where an absolute import in ``importer`` is looked up, first match wins. ``added``:
        relative folders the file put on ``sys.path``, from its own folder (where scripts run)
        or the root."""
        own = Path(os.path.abspath(importer)).parent
        folders = [own, self.root, self.root / "src"]
        folders += [base / folder for folder in added for base in (own, self.root)]
        unique = dict.fromkeys(folder for folder in folders if folder.is_dir())
        return tuple(unique)

    def module_file(
        self, importer: Path, name: str, level: int = 0, added: tuple[str, ...] = ()
    ) -> Path | None:
        """The project file ``import name`` loads in ``importer`` (``level`` leading dots for a
        relative import; ``name`` may then be empty): a module's ``.py`` or a package's
        ``__init__.py``; ``added``: folders the importer put on ``sys.path``. None when it is
        not a file of this project."""
        key = (str(Path(os.path.abspath(importer)).parent), name, level, added)
        if key not in self._found:
            self._found[key] = self._lookup(Path(os.path.abspath(importer)), name, level, added)
        return self._found[key]

    def submodule_file(self, package_file: Path, name: str) -> Path | None:
        """``from package import name`` may bind a submodule: its file, if the package is a
        folder of this project that has one."""
        if package_file.name != "__init__.py" or "." in name or not name.isidentifier():
            return None
        return self._inside(_module_in(package_file.parent, [name]))

    def _lookup(self, importer: Path, name: str, level: int, added: tuple[str, ...]) -> Path | None:
        parts = name.split(".") if name else []
        if len(parts) > MAX_IMPORT_PARTS or not all(part.isidentifier() for part in parts):
            return None
        if level:
            package = importer.parent
            for _ in range(level - 1):
                package = package.parent
            if not parts:
                return self._inside(package / "__init__.py")
            return self._inside(_module_in(package, parts))
        if not parts:
            return None
        for folder in self.search_path(importer, added):
            found = self._inside(_module_in(folder, parts))
            if found is not None:
                return found
        return None

    def _inside(self, path: Path | None) -> Path | None:
        """``path`` if it is a regular file whose real location is inside the project."""
        if path is None or not os.path.isfile(path):
            return None
        real = os.path.realpath(path)
        if os.path.commonpath([real, self._real_root]) != self._real_root:
            return None
        return path


def _module_in(folder: Path, parts: list[str]) -> Path | None:
    """The file of the dotted module ``parts`` under ``folder``: ``a/b/__init__.py`` or
    ``a/b.py``, a package first as Python's finder has it. Packages on the way may lack
    ``__init__.py`` (namespace packages)."""
    *packages, last = parts
    base = folder.joinpath(*packages)
    if not base.is_dir():
        return None
    package = base / last / "__init__.py"
    if package.is_file():
        return package
    module = base / f"{last}.py"
    return module if module.is_file() else None
