"""The result cache: a warm run lints nothing again, and nothing about the cache can break a run."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest
from snippets import DISCARDED, MIXED

from devlint import cache as cache_module
from devlint.cache import CACHE_DIR_NAME, ResultCache, lint_file_cached
from devlint.config import Settings
from devlint.diagnostic import Diagnostic, Severity
from devlint.engine import lint_file
from devlint.frontends import cli

SETTINGS = Settings()
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for index in range(20):  # enough files for worker processes
        (tmp_path / f"m{index:02}.py").write_text(MIXED if index % 5 == 0 else DISCARDED)
    return tmp_path


def run(project: Path, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    cli.main(["check", "--cache-dir", str(project / "cache"), *options, str(project)])
    return capsys.readouterr().out


def forbid_linting(monkeypatch: pytest.MonkeyPatch) -> None:
    def lint(path: Path, settings: Settings) -> list[Diagnostic]:
        raise AssertionError(f"{path} was linted again")

    monkeypatch.setattr(cli, "lint_file", lint)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_warm_run_reports_the_same_without_linting_again(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    cold = run(project, capsys, "--jobs", jobs)
    assert "DVL101" in cold and "DVL201" in cold
    forbid_linting(monkeypatch)
    assert run(project, capsys, "--jobs", jobs) == cold


def test_a_warm_run_does_not_import_libcst_or_the_rules(project: Path) -> None:
    """Start-up is most of a warm run (every pre-commit run on unchanged files)."""
    argv = ["check", "--jobs", "1", "--cache-dir", str(project / "cache"), str(project)]
    code = (
        "import sys\n"
        "from devlint.frontends.cli import main\n"
        f"main({argv!r})\n"
        "heavy = sorted(m for m in sys.modules if m == 'libcst' or m.startswith('devlint.rules'))\n"
        "print(heavy)\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
        for _ in range(2)
    ]
    cold, warm = (done.stdout.splitlines() for done in runs)
    assert cold[:-1] == warm[:-1] and "DVL101" in cold[0]
    assert "libcst" in cold[-1]  # the check can see an import
    assert warm[-1] == "[]"


def test_changed_file_is_linted_again(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run(project, capsys)
    (project / "m01.py").write_text(MIXED)
    linted: list[str] = []

    def lint(path: Path, settings: Settings) -> list[Diagnostic]:
        linted.append(path.name)
        return lint_file(path, settings)

    monkeypatch.setattr(cli, "lint_file", lint)
    assert "m01.py:7:12: DVL101" in run(project, capsys, "--jobs", "1")
    assert linted == ["m01.py"]


def test_no_cache_neither_reads_nor_writes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = run(project, capsys, "--no-cache")
    assert not (project / "cache").exists()
    assert run(project, capsys, "--no-cache") == first


def test_default_cache_is_at_the_project_root_and_ignored_by_git(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(cache_module.CACHE_DIR_ENV, raising=False)
    (project / "pyproject.toml").write_text("[tool.devlint]\nignore = []\n")
    monkeypatch.chdir(project.parent)
    cli.main(["check", "--jobs", "1", str(project)])
    root = project / CACHE_DIR_NAME
    assert (root / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (root / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f0688")


@pytest.mark.parametrize(
    "change",
    [
        lambda data, name, settings: (data + b"\n", name, settings),
        lambda data, name, settings: (data, name + "x", settings),
        lambda data, name, settings: (data, name, Settings(ignore=("DVL201",))),
        lambda data, name, settings: (data, name, Settings(device_names=("dev",))),
    ],
    ids=["content", "reported-name", "ignore", "device-names"],
)
def test_key_depends_on_content_name_and_settings(tmp_path: Path, change) -> None:
    data, name = DISCARDED.encode(), "m.py"
    before = ResultCache.open(tmp_path, SETTINGS).key(data, name)
    data, name, settings = change(data, name, SETTINGS)
    assert ResultCache.open(tmp_path, settings).key(data, name) != before


def test_new_code_version_starts_afresh_and_removes_old_versions_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = ResultCache.open(tmp_path, SETTINGS)
    unrelated = tmp_path / "notes"
    unrelated.mkdir()
    key = old.key(b"x", "m.py")
    old.put(key, [])
    monkeypatch.setattr(cache_module, "code_fingerprint", lambda: "f" * 64)
    new = ResultCache.open(tmp_path, SETTINGS)
    assert new.get(new.key(b"x", "m.py")) is None
    assert not old.folder.exists()
    assert unrelated.is_dir()


def test_diagnostics_round_trip_with_fixes(tmp_path: Path) -> None:
    results = ResultCache.open(tmp_path, SETTINGS)
    path = tmp_path / "m.py"
    path.write_text(DISCARDED)
    diagnostics = lint_file(path, SETTINGS)
    assert diagnostics, "the example must report something"
    key = results.key(path.read_bytes(), str(path))
    results.put(key, diagnostics)
    restored = results.get(key)
    assert restored == diagnostics
    assert [d.fix for d in restored] == [d.fix for d in diagnostics]  # compare=False fields too
    assert all(d.severity in Severity for d in restored)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{not json",
        '[{"@": "Diagnostic"}]',
        '[{"@": "Popen", "args": ["rm", "-rf", "/"]}]',
        '{"@": "Severity", "value": "error"}',
        "[1, 2]",
    ],
    ids=["empty", "truncated", "missing-fields", "unknown-type", "not-a-list", "not-diagnostics"],
)
def test_corrupt_entry_is_a_miss_and_is_replaced(tmp_path: Path, text: str) -> None:
    results = ResultCache.open(tmp_path, SETTINGS)
    path = tmp_path / "m.py"
    path.write_text(DISCARDED)
    key = results.key(path.read_bytes(), str(path))
    entry = results.folder / key[:2] / key[2:]
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text(text)
    assert results.get(key) is None
    diagnostics = lint_file_cached(path, SETTINGS, results, lint_file)
    assert [d.code for d in diagnostics] == ["DVL201"]
    assert results.get(key) == diagnostics


def test_internal_errors_are_not_stored(tmp_path: Path) -> None:
    results = ResultCache.open(tmp_path, SETTINGS)
    path = tmp_path / "m.py"
    path.write_text(DISCARDED)

    def failing(path: Path, settings: Settings) -> list[Diagnostic]:
        return [Diagnostic(str(path), 1, 0, 1, 0, "DVL003", "internal error: boom")]

    lint_file_cached(path, SETTINGS, results, failing)
    assert results.get(results.key(path.read_bytes(), str(path))) is None


def test_file_saved_while_it_is_linted_is_not_stored(tmp_path: Path) -> None:
    results = ResultCache.open(tmp_path, SETTINGS)
    path = tmp_path / "m.py"
    path.write_text(DISCARDED)
    original = path.read_bytes()

    def lint_then_edit(path: Path, settings: Settings) -> list[Diagnostic]:
        diagnostics = lint_file(path, settings)
        path.write_text(MIXED)  # the editor saves a new version meanwhile
        return diagnostics

    lint_file_cached(path, SETTINGS, results, lint_then_edit)
    assert results.get(results.key(original, str(path))) is None


def test_unwritable_cache_location_is_not_an_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = project / "cache"
    blocker.write_text("a file where the cache folder should be")
    assert cli.main(["check", "--cache-dir", str(blocker / "sub"), str(project)]) == 1
    assert "DVL101" in capsys.readouterr().out


def _hammer(folder: str, salt: bytes, key: str, rounds: int) -> None:
    results = ResultCache(Path(folder), salt)
    diagnostics = [
        Diagnostic("m.py", line, 0, line, 4, "DVL101", "x" * 2000) for line in range(1, 40)
    ]
    for _ in range(rounds):
        results.put(key, diagnostics)


def test_concurrent_writers_never_expose_a_partial_entry(tmp_path: Path) -> None:
    results = ResultCache.open(tmp_path, SETTINGS)
    key = results.key(b"shared", "m.py")
    context = multiprocessing.get_context("spawn")
    writers = [
        context.Process(target=_hammer, args=(str(results.folder), results.salt, key, 150))
        for _ in range(3)
    ]
    for writer in writers:
        writer.start()
    seen = 0
    while any(writer.is_alive() for writer in writers):
        diagnostics = results.get(key)
        if diagnostics is not None:
            assert len(diagnostics) == 39
            seen += 1
    for writer in writers:
        writer.join()
        assert writer.exitcode == 0
    assert results.get(key) is not None
    leftovers = [p.name for p in (results.folder / key[:2]).iterdir() if p.name != key[2:]]
    assert leftovers == []  # no temporary files left behind


def test_entries_are_json_not_pickle(tmp_path: Path) -> None:
    results = ResultCache.open(tmp_path, SETTINGS)
    key = results.key(b"x", "m.py")
    results.put(key, [Diagnostic("m.py", 1, 0, 1, 1, "DVL101", "message")])
    entry = json.loads((results.folder / key[:2] / key[2:]).read_text())
    assert entry[0]["@"] == "Diagnostic" and entry[0]["severity"]["value"] == "error"
