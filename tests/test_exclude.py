"""Leaving paths out: ``exclude``/``extend-exclude`` (command line and ``[tool.devlint]``),
``.gitignore`` files, and what happens to paths named on the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from devlint.project.gitignore import is_ignored, parse_gitignore


def devlint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "devlint", "check", "--no-cache", "--format", "json", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def linted(root: Path, *args: str) -> list[str]:
    """The files a run reports (every file below holds an unknown-name notice-free bug)."""
    import json

    result = devlint(*args, cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return sorted({entry["path"] for entry in json.loads(result.stdout)})


BUGGY = "import torch\n\nx = torch.ones(3)\nx.to('cuda')\n"  # DVL201: a discarded .to()


def tree(root: Path, *paths: str) -> None:
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(BUGGY)


# the gitignore matcher ---------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "path", "is_directory", "ignored"),
    [
        (["*.py"], "a/b/m.py", False, True),
        (["*.py", "!keep.py"], "a/keep.py", False, False),
        (["*.py", "!keep.py", "keep.py"], "a/keep.py", False, True),  # the last match wins
        (["build/"], "a/build", True, True),
        (["build/"], "a/build", False, False),  # directories only
        (["/top.py"], "top.py", False, True),
        (["/top.py"], "a/top.py", False, False),  # anchored
        (["a/m.py"], "x/a/m.py", False, False),  # an inner slash anchors too
        (["**/gen"], "x/y/gen", True, True),
        (["**/gen"], "gen", True, True),
        (["a/**/m.py"], "a/m.py", False, True),
        (["a/**/m.py"], "a/x/y/m.py", False, True),
        (["a/**"], "a/x/m.py", False, True),
        (["a/**"], "b/a/m.py", False, False),
        (["m?.py"], "m1.py", False, True),
        (["m[0-9].py"], "m7.py", False, True),
        (["m[!0-9].py"], "m7.py", False, False),
        (["*.py"], "a/", True, False),
        (["# *.py", ""], "m.py", False, False),  # a comment and a blank line
        (["\\#m.py"], "#m.py", False, True),
        (["\\!m.py"], "!m.py", False, True),
        (["m.py   "], "m.py", False, True),  # trailing spaces are not part of it
        (["*"], "a/m.py", False, True),
        (["a*"], "x/b.py", False, False),
    ],
)
def test_gitignore_patterns(lines: list[str], path: str, is_directory: bool, ignored: bool) -> None:
    base = os.path.abspath("/project")
    rules = parse_gitignore("\n".join(lines), base)
    assert is_ignored(rules, os.path.join(base, path), is_directory) is ignored


def test_a_pattern_applies_only_below_its_file() -> None:
    rules = parse_gitignore("*.py\n", "/project/sub")
    assert is_ignored(rules, "/project/sub/m.py", False)
    assert not is_ignored(rules, "/project/m.py", False)
    assert not is_ignored(rules, "/project/subway/m.py", False)


# walking with .gitignore files --------------------------------------------------


def test_gitignore_negation_and_nested_files(tmp_path: Path) -> None:
    tree(
        tmp_path,
        "main.py",
        "build/out.py",
        "gen/a_pb2.py",
        "gen/keep_pb2.py",
        "pkg/local.py",
        "pkg/other.py",
    )
    (tmp_path / ".gitignore").write_text("build/\n*_pb2.py\n!keep_pb2.py\n")
    (tmp_path / "pkg" / ".gitignore").write_text("local.py\n")
    assert linted(tmp_path, ".") == ["gen/keep_pb2.py", "main.py", "pkg/other.py"]
    everything = ["build/out.py", "gen/a_pb2.py", "gen/keep_pb2.py", "main.py"]
    assert linted(tmp_path, ".", "--no-respect-gitignore") == [
        *everything,
        "pkg/local.py",
        "pkg/other.py",
    ]


def test_gitignore_files_above_the_walk_count_inside_a_repository(tmp_path: Path) -> None:
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("secret.py\n")
    (tmp_path / ".gitignore").write_text("/src/gen/\n")
    tree(tmp_path, "src/gen/m.py", "src/secret.py", "src/m.py")
    assert linted(tmp_path / "src", ".") == ["m.py"]


def test_config_can_turn_gitignore_off(tmp_path: Path) -> None:
    tree(tmp_path, "m.py", "ignored.py")
    (tmp_path / ".gitignore").write_text("ignored.py\n")
    (tmp_path / "pyproject.toml").write_text("[tool.devlint]\nrespect-gitignore = false\n")
    assert linted(tmp_path, ".") == ["ignored.py", "m.py"]
    assert linted(tmp_path, ".", "--respect-gitignore") == ["m.py"]


# exclude and extend-exclude ----------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    tree(tmp_path, "m.py", "venv/m.py", "build/m.py", "src/gen/m.py", "src/m_pb2.py", "src/m.py")
    return tmp_path


def test_extend_exclude_adds_names_and_paths(project: Path) -> None:
    assert linted(project, ".") == [
        "build/m.py",
        "m.py",
        "src/gen/m.py",
        "src/m.py",
        "src/m_pb2.py",
    ]
    assert linted(project, ".", "--extend-exclude", "build, *_pb2.py,src/gen") == [
        "m.py",
        "src/m.py",
    ]


def test_exclude_replaces_the_default_list(project: Path) -> None:
    assert linted(project, ".", "--exclude", "build") == [
        "m.py",
        "src/gen/m.py",
        "src/m.py",
        "src/m_pb2.py",
        "venv/m.py",
    ]


def test_config_keys_are_relative_to_the_pyproject(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.devlint]\nexclude = ["build"]\nextend-exclude = ["src/gen", "*_pb2.py"]\n'
    )
    expected = ["m.py", "src/m.py", "venv/m.py"]
    assert linted(project, ".") == expected
    assert linted(project / "src", ".") == ["m.py"]  # src/gen is relative to the pyproject
    assert linted(project, ".", "--extend-exclude", "venv") == ["m.py", "src/m.py"]
    assert linted(project, ".", "--exclude", "src") == ["build/m.py", "m.py", "venv/m.py"]


def test_explicit_paths_are_linted_unless_force_exclude(project: Path) -> None:
    (project / ".gitignore").write_text("m.py\n")
    named = ["build/m.py", "src/gen", "src/m_pb2.py", "m.py"]
    excludes = ["--extend-exclude", "build,src/gen,*_pb2.py"]
    assert linted(project, *excludes, *named) == [
        "build/m.py",
        "m.py",
        "src/gen/m.py",
        "src/m_pb2.py",
    ]
    # An explicit file or directory, or one inside an excluded directory, is left out;
    # .gitignore decides only inside directories that are walked.
    assert linted(project, *excludes, "--force-exclude", *named) == ["m.py"]
    (project / "pyproject.toml").write_text("[tool.devlint]\nforce-exclude = true\n")
    assert linted(project, *excludes, *named) == ["m.py"]


def test_force_exclude_never_leaves_out_the_project_root_itself(tmp_path: Path) -> None:
    from devlint.project.exclusions import Exclusions

    root = tmp_path / "build"
    exclusions = Exclusions(("build",), force_exclude=True, root=str(root))
    assert not exclusions.excludes_named(str(root))
    assert not exclusions.excludes_named(str(root / "src" / "m.py"))
    assert exclusions.excludes_named(str(root / "src" / "build" / "m.py"))
    assert exclusions.excludes_named(str(tmp_path / "other" / "build"))  # outside: by itself
