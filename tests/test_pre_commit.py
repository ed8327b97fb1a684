"""The pre-commit hook, through pre-commit itself, installed offline.

``pre-commit try-repo`` clones a hook repository made from this checkout,
creates the hook's virtualenv and runs ``pip install .`` in it. That install
runs with ``PIP_NO_INDEX=1`` and no pip configuration, from a wheelhouse
that holds the build backend (hatchling and its dependencies) and the
runtime dependencies (libcst at the installed version, PyYAML). Filling the
wheelhouse is the only step that uses pip's configured index; where no
index can be reached the test is skipped and says why.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOOK_REPOSITORY_FILES = (
    "pyproject.toml",
    "README.md",
    ".pre-commit-hooks.yaml",
    "devlint",
    "rules",
)
BUGGY = """\
import torch


def run():
    a = torch.zeros(3, device="cuda")
    b = torch.ones(3)
    return a + b
"""
CLEAN = BUGGY.replace("torch.ones(3)", 'torch.ones(3, device="cuda")')

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git"),
    pytest.mark.slow,  # installs devlint into pre-commit's environment (docs/testing.md)
]


def git_environment(home: Path) -> dict[str, str]:
    """An environment where git and pip see nothing of this machine's configuration."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PIP_", "PRE_COMMIT", "GIT_", "VIRTUALENV_"))
    }
    environment.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="devlint tests",
        GIT_AUTHOR_EMAIL="tests@devlint.invalid",
        GIT_COMMITTER_NAME="devlint tests",
        GIT_COMMITTER_EMAIL="tests@devlint.invalid",
        PRE_COMMIT_HOME=str(home / "pre-commit-home"),
    )
    return environment


def offline_environment(home: Path, wheelhouse: Path) -> dict[str, str]:
    """``git_environment`` where pip installs only from ``wheelhouse``."""
    environment = git_environment(home)
    environment.update(
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheelhouse),
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return environment


def run(*command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Wheels for an offline ``pip install .`` of devlint: build backend and dependencies."""
    folder = tmp_path_factory.mktemp("wheelhouse")
    requirements = ["hatchling>=1.18", f"libcst=={version('libcst')}"]
    pip_download = [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:"]
    download = subprocess.run(
        [*pip_download, "--dest", str(folder), *requirements],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if download.returncode != 0:
        pytest.skip(f"cannot fill the wheelhouse from pip's index: {download.stderr.strip()}")
    return folder


@pytest.fixture(scope="module")
def hook_repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's hook, committed to a fresh git repository as pre-commit clones it."""
    folder = tmp_path_factory.mktemp("hook-repository")
    environment = git_environment(folder)
    for name in HOOK_REPOSITORY_FILES:
        source = ROOT / name
        if source.is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
            shutil.copytree(source, folder / name, ignore=ignore)
        else:
            shutil.copy2(source, folder / name)
    init = ("git", "init", "-q", "--initial-branch", "main")  # the branch the docs' rev names
    for command in (init, ("git", "add", "-A"), ("git", "commit", "-qm", "hook")):
        assert run(*command, cwd=folder, env=environment).returncode == 0
    return folder


def project_with_buggy_file(tmp_path: Path, environment: dict[str, str]) -> Path:
    """A git repository whose staged ``train.py`` has one DVL101 at 7:12."""
    project = tmp_path / "project"
    project.mkdir()
    assert run("git", "init", "-q", cwd=project, env=environment).returncode == 0
    (project / "train.py").write_text(BUGGY)
    run("git", "add", "train.py", cwd=project, env=environment)
    return project


def test_hook_fails_on_a_buggy_file_and_passes_on_a_clean_one(
    tmp_path: Path, wheelhouse: Path, hook_repository: Path
) -> None:
    environment = offline_environment(tmp_path, wheelhouse)
    project = project_with_buggy_file(tmp_path, environment)
    try_repo = (sys.executable, "-m", "pre_commit", "try-repo", str(hook_repository), "devlint")
    failed = run(*try_repo, "--all-files", cwd=project, env=environment)
    output = failed.stdout + failed.stderr
    assert failed.returncode == 1, output
    assert "devlint" in output and "Failed" in output, output
    assert "train.py:7:12: DVL101 " in output, output

    (project / "train.py").write_text(CLEAN)
    run("git", "add", "train.py", cwd=project, env=environment)
    passed = run(*try_repo, "--all-files", cwd=project, env=environment)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout


def test_hook_checks_a_staged_notebook(
    tmp_path: Path, wheelhouse: Path, hook_repository: Path
) -> None:
    environment = offline_environment(tmp_path, wheelhouse)
    project = project_with_buggy_file(tmp_path, environment)
    (project / "train.py").write_text(CLEAN)
    shutil.copy(ROOT / "fixtures" / "notebooks" / "input_left_on_cpu.ipynb", project / "nb.ipynb")
    run("git", "add", "train.py", "nb.ipynb", cwd=project, env=environment)
    try_repo = (sys.executable, "-m", "pre_commit", "try-repo", str(hook_repository), "devlint")
    failed = run(*try_repo, "--all-files", cwd=project, env=environment)
    output = failed.stdout + failed.stderr
    assert failed.returncode == 1, output
    assert "nb.ipynb:cell 5:1:5: DVL102 " in output, output


def documented_configurations() -> dict[str, str]:
    """The ``.pre-commit-config.yaml`` snippets users copy from the docs, by page."""
    snippets = {}
    for page in ("README.md", "docs/ci.md", "docs/usage.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        blocks = re.findall(r"```yaml\n(repos:\n.*?)```", text, flags=re.DOTALL)
        (snippets[page],) = [block for block in blocks if "- id: devlint" in block]
    return snippets


def test_the_documented_configuration_installs_and_runs_the_hook(
    tmp_path: Path, wheelhouse: Path, hook_repository: Path
) -> None:
    """The snippet's ``rev`` exists, and ``autoupdate --freeze`` pins it to a commit."""
    environment = offline_environment(tmp_path, wheelhouse)
    project = project_with_buggy_file(tmp_path, environment)
    config = project / ".pre-commit-config.yaml"
    for page, snippet in documented_configurations().items():
        url = re.search(r"repo: (\S+)", snippet).group(1)
        config.write_text(snippet.replace(url, str(hook_repository)))
        result = run(
            sys.executable, "-m", "pre_commit", "run", "--all-files", cwd=project, env=environment
        )
        output = result.stdout + result.stderr
        assert result.returncode == 1 and "train.py:7:12: DVL101 " in output, (page, output)

    frozen = run(
        sys.executable, "-m", "pre_commit", "autoupdate", "--freeze", cwd=project, env=environment
    )
    assert frozen.returncode == 0, frozen.stdout + frozen.stderr
    assert re.search(r"rev: [0-9a-f]{40}", config.read_text()), config.read_text()


def test_manifest_is_valid_for_pre_commit_and_matches_the_docs() -> None:
    from pre_commit.clientlib import load_manifest

    (hook,) = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert (hook["id"], hook["entry"], hook["language"]) == (
        "devlint",
        "devlint check --force-exclude",
        "python",
    )
    assert hook["types_or"] == ["python", "pyi", "jupyter"]
    for page in ("docs/ci.md", "docs/usage.md", "README.md"):
        assert "- id: devlint" in (ROOT / page).read_text(encoding="utf-8"), page
