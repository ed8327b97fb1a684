"""The result cache: a warm run lints nothing again, and nothing about the cache can break a run."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from snippets import DISCARDED, MIXED

from devlint.config import Settings
from devlint.diagnostic import Diagnostic, Severity
from devlint.frontends import cli
from devlint.inputs import result_cache as cache_module
from devlint.inputs.cache_signing import cache_secret, sign, verified
from devlint.inputs.result_cache import CACHE_DIR_NAME, Linted, ResultCache, lint_file_cached
from devlint.inputs.tree_cache import TreeCache
from devlint.rules import all_rules
from devlint.running.engine import lint_file

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
    def lint(path: Path, settings: Settings, trees: TreeCache | None = None) -> Linted:
        raise AssertionError(f"{path} was linted again")

    monkeypatch.setattr(cli, "lint_file", lint)


def record_linting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files linted from now on (not answered by the cache)."""
    linted: list[str] = []
    real_lint = cli.lint_file

    def lint(path: Path, settings: Settings, trees: TreeCache | None = None) -> Linted:
        linted.append(path.name)
        return real_lint(path, settings, trees)

    monkeypatch.setattr(cli, "lint_file", lint)
    return linted


def entry_path(results: ResultCache, data: bytes, name: str) -> Path:
    key = results.key(data, name)
    return results.folder / key[:2] / key[2:]


def read_entry(results: ResultCache, entry: Path) -> dict:
    """The JSON of a stored entry, its signature checked."""
    text = verified(results.secret, entry.read_bytes())
    assert text is not None
    return json.loads(text)


def write_entry(results: ResultCache, entry: Path, content: dict | bytes) -> None:
    """An entry as the user's own devlint would sign it (a bug of an older devlint, say)."""
    text = content if isinstance(content, bytes) else json.dumps(content).encode()
    entry.write_bytes(sign(results.secret, text) + text)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_warm_run_reports_the_same_without_linting_again(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    cold = run(project, capsys, "--jobs", jobs)
    assert "DVL101" in cold and "DVL201" in cold
    forbid_linting(monkeypatch)
    assert run(project, capsys, "--jobs", jobs) == cold


@pytest.mark.parametrize("fixable", [False, True])
def test_a_warm_run_does_not_import_libcst_or_the_rules(project: Path, fixable: bool) -> None:
    """Start-up is most of a warm run (every pre-commit run on unchanged files). Counting
    what --fix would apply computes the fixes of the files that have some (as --fix does:
    devlint.running.fix_count), which needs LibCST: a run whose findings have no fix, or that
    prints no count (-q), imports none."""
    if not fixable:
        for path in project.glob("*.py"):
            if path.read_text() == DISCARDED:
                path.unlink()
    quiet = ["-q"] if fixable else []
    argv = ["check", *quiet, "--jobs", "1", "--cache-dir", str(project / "cache"), str(project)]
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
    linted = record_linting(monkeypatch)
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


def seen_by_git(folder: Path) -> list[str]:
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    return sorted(line[3:] for line in status.stdout.splitlines())


@pytest.mark.parametrize("given_by", ["option", "environment"])
def test_a_given_directory_is_neither_marked_nor_pruned(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    given_by: str,
) -> None:
    """``--cache-dir .`` or ``DEVLINT_CACHE_DIR=$XDG_CACHE_HOME``: devlint works in a folder of
    its own in there, and the user's folder named like a cache version folder survives."""
    project = tmp_path / "project"
    lookalike = project / "0123456789abcdef"
    lookalike.mkdir(parents=True)
    (lookalike / "notes.txt").write_text("mine\n")
    (project / "m.py").write_text(MIXED)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    before = seen_by_git(project)
    options: list[str] = []
    if given_by == "option":
        monkeypatch.delenv(cache_module.CACHE_DIR_ENV, raising=False)
        options = ["--cache-dir", str(project)]
    else:
        monkeypatch.setenv(cache_module.CACHE_DIR_ENV, str(project))
    argv = ["check", "--jobs", "1", *options, str(project)]
    assert cli.main(argv) == 1
    cold = capsys.readouterr().out
    forbid_linting(monkeypatch)  # the second run is answered by the cache
    assert cli.main(argv) == 1
    assert capsys.readouterr().out == cold and "DVL101" in cold
    assert (lookalike / "notes.txt").read_text() == "mine\n"
    assert not (project / ".gitignore").exists()
    assert not (project / "CACHEDIR.TAG").exists()
    assert seen_by_git(project) == before == ["0123456789abcdef/notes.txt", "m.py"]
    assert (project / CACHE_DIR_NAME / "CACHEDIR.TAG").is_file()


def test_a_cache_folder_that_devlint_did_not_make_is_left_alone(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``.devlint_cache`` without devlint's tag is someone else's: the run goes without."""
    folder = project / "cache" / CACHE_DIR_NAME
    (folder / "0123456789abcdef").mkdir(parents=True)
    (folder / "0123456789abcdef" / "notes.txt").write_text("mine")
    before = sorted(folder.rglob("*"))
    assert "DVL101" in run(project, capsys)
    assert sorted(folder.rglob("*")) == before


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


def test_new_code_version_starts_afresh_and_removes_only_devlints_old_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = ResultCache.open(tmp_path, SETTINGS)
    old.put(b"x", "m.py", [])
    lookalike = (
        old.folder.parent / "0123456789abcdef" / "ab"
    )  # named like devlint's, not its layout
    lookalike.mkdir(parents=True)
    (lookalike / "notes.txt").write_text("mine")
    monkeypatch.setattr(cache_module, "code_fingerprint", lambda: "f" * 64)
    new = ResultCache.open(tmp_path, SETTINGS)
    assert new.get(b"x", "m.py") is None
    assert not old.folder.exists()
    assert (lookalike / "notes.txt").read_text() == "mine"


def test_diagnostics_round_trip_with_fixes(tmp_path: Path) -> None:
    results = ResultCache.open(tmp_path, SETTINGS)
    path = tmp_path / "m.py"
    path.write_text(DISCARDED)
    diagnostics = lint_file(path, SETTINGS)
    assert diagnostics, "the example must report something"
    results.put(path.read_bytes(), str(path), diagnostics)
    restored = results.get(path.read_bytes(), str(path))
    assert restored == diagnostics
    assert [d.fix for d in restored] == [d.fix for d in diagnostics]  # compare=False fields too
    assert all(d.severity in Severity for d in restored)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{not json",
        "[" * 100_000 + "]" * 100_000,
        '{"@": "Popen", "args": ["rm", "-rf", "/"]}',
        "[]",
        "\udcff",
    ],
    ids=["empty", "truncated", "nested-too-deeply", "unknown-type", "old-format", "not-utf-8"],
)
def test_corrupt_entry_is_a_miss_and_is_replaced(tmp_path: Path, text: str) -> None:
    results = ResultCache.open(tmp_path, SETTINGS)
    path = tmp_path / "m.py"
    path.write_text(DISCARDED)
    data, name = path.read_bytes(), str(path)
    entry = entry_path(results, data, name)
    entry.parent.mkdir(parents=True, exist_ok=True)
    write_entry(results, entry, text.encode("utf-8", "surrogateescape"))
    assert results.get(data, name) is None
    diagnostics = lint_file_cached(path, SETTINGS, results, cli.lint_file)
    assert [d.code for d in diagnostics] == ["DVL201"]
    assert results.get(data, name) == diagnostics


def first(entry: dict) -> dict:
    return entry["diagnostics"][0]


PLANTED = {
    "line-as-text": lambda entry: first(entry).update(line="7"),
    "line-as-bool": lambda entry: first(entry).update(line=True),
    "column-as-float": lambda entry: first(entry).update(column=11.0),
    "unknown-severity": lambda entry: first(entry).update(severity="fatal"),
    "unknown-code": lambda entry: first(entry).update(code="XYZ999"),
    "diagnostic-for-another-path": lambda entry: first(entry).update(path="other.py"),
    "line-past-the-end": lambda entry: first(entry).update(line=99, end_line=99),
    "column-past-the-line": lambda entry: first(entry).update(end_column=500),
    "negative-column": lambda entry: first(entry).update(column=-1),
    "end-before-start": lambda entry: first(entry).update(end_line=1),
    "escape-in-message": lambda entry: first(entry).update(message="\x1b]0;owned\x07\x1b[2J"),
    "extra-field": lambda entry: first(entry).update(extra=1),
    "missing-field": lambda entry: first(entry).pop("message"),
    "fix-of-the-wrong-type": lambda entry: first(entry).update(fix=[]),
    "escape-in-a-fix": lambda entry: first(entry).update(
        fix={
            "title": "t",
            "safe": True,
            "edits": [{"line": 7, "column": 0, "end_line": 7, "end_column": 1, "text": "\x1b[2J"}],
        }
    ),
    "entry-for-another-file": lambda entry: entry.update(path="other.py"),
    "entry-of-another-key": lambda entry: entry.update(key="0" * 64),
    "extra-entry-field": lambda entry: entry.update(note=""),
    "list-of-no-diagnostics": lambda entry: entry.update(diagnostics=[[]]),
}


def cold_run_and_an_entry(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[list[str], str, ResultCache, Path]:
    """A cold run over ``project`` (its arguments and output), its cache, and the entry it
    stored for ``m00.py`` (a file with a finding)."""
    argv = ["check", "--jobs", "1", "--cache-dir", str(project / "cache"), str(project)]
    assert cli.main(argv) == 1
    cold = capsys.readouterr().out
    path = project / "m00.py"
    results = ResultCache.open(project / "cache", SETTINGS)
    return argv, cold, results, entry_path(results, path.read_bytes(), str(path))


@pytest.mark.parametrize("plant", PLANTED.values(), ids=PLANTED.keys())
def test_an_entry_that_does_not_hold_up_is_linted_again(
    project: Path, capsys: pytest.CaptureFixture[str], plant
) -> None:
    """Never an aborted run (exit 2), never what the entry says: the file's real findings."""
    argv, cold, results, entry = cold_run_and_an_entry(project, capsys)
    path = project / "m00.py"
    data, name = path.read_bytes(), str(path)
    planted = read_entry(results, entry)
    plant(planted)
    write_entry(results, entry, planted)
    assert results.get(data, name) is None
    assert cli.main(argv) == 1
    assert capsys.readouterr().out == cold
    assert results.get(data, name) == lint_file(path, SETTINGS)  # replaced by a sound entry


@pytest.mark.parametrize("kind", ["fifo", "link-to-dev-zero"])
def test_an_entry_that_is_not_a_regular_file_is_a_miss_at_once(tmp_path: Path, kind: str) -> None:
    """Reading it would block for ever (a FIFO) or never end (``/dev/zero``)."""
    results = ResultCache.open(tmp_path, SETTINGS)
    entry = entry_path(results, b"x", "m.py")
    entry.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(entry)
    else:
        entry.symlink_to("/dev/zero")
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from devlint.inputs.result_cache import ResultCache\n"
        f"print(ResultCache(Path({str(results.folder)!r}), {results.salt!r}, b'k' * 32)"
        ".get(b'x', 'm.py'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.stdout == "None\n", done.stderr


def test_every_diagnostic_devlint_reports_is_read_back(tmp_path: Path) -> None:
    """The checks on read refuse nothing devlint writes (else it would lint such files again
    on every run): every rule's examples and fixtures, and notices on odd files."""
    odd = {
        "syntax_error.py": b"import torch\ndef f(:\n",
        "unterminated.py": b'import torch\nx = """\n',
        "undecodable.py": b"import torch\nx = '\xe9'\n",
        "binary.py": b"import torch\n\x00",
        "too_deep.py": b"import torch\nx = " + b"(" * 300 + b")" * 300 + b"\n",
        "crlf_and_tabs.py": b"import torch\r\nif x:\r\n\tx = torch.ones(3)\r\n\tx.to('cuda')\r\n",
    }
    for name, data in odd.items():
        (tmp_path / name).write_bytes(data)
    files = [
        *sorted(ROOT.glob("rules/*/*.py")),
        *sorted(ROOT.glob("fixtures/*/*.py")),
        *(tmp_path / name for name in odd),
    ]
    results = ResultCache.open(tmp_path / "cache", SETTINGS)
    every_rule = Settings(extend_select=("DVL",))
    codes = set()
    for path in files:
        data, diagnostics = path.read_bytes(), lint_file(path, every_rule)
        results.put(data, str(path), diagnostics)
        restored = results.get(data, str(path))
        assert restored == diagnostics, path
        assert [d.fix for d in restored] == [d.fix for d in diagnostics], path
        codes |= {d.code for d in diagnostics}
    rule_codes = {rule.meta.code for rule in all_rules()}
    assert codes >= rule_codes | {"DVL001", "DVL002", "DVL004"}


def test_internal_errors_are_not_stored(tmp_path: Path) -> None:
    results = ResultCache.open(tmp_path, SETTINGS)
    path = tmp_path / "m.py"
    path.write_text(DISCARDED)

    def failing(path: Path, settings: Settings) -> Linted:
        return Linted([Diagnostic(str(path), 1, 0, 1, 0, "DVL003", "internal error: boom")])

    lint_file_cached(path, SETTINGS, results, failing)
    assert results.get(path.read_bytes(), str(path)) is None


def test_file_saved_while_it_is_linted_is_not_stored(tmp_path: Path) -> None:
    results = ResultCache.open(tmp_path, SETTINGS)
    path = tmp_path / "m.py"
    path.write_text(DISCARDED)
    original = path.read_bytes()

    def lint_then_edit(path: Path, settings: Settings) -> Linted:
        diagnostics = lint_file(path, settings)
        path.write_text(MIXED)  # the editor saves a new version meanwhile
        return Linted(diagnostics)

    lint_file_cached(path, SETTINGS, results, lint_then_edit)
    assert results.get(original, str(path)) is None


def test_unwritable_cache_location_is_not_an_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = project / "cache"
    blocker.write_text("a file where the cache folder should be")
    assert cli.main(["check", "--cache-dir", str(blocker / "sub"), str(project)]) == 1
    assert "DVL101" in capsys.readouterr().out


SHARED = b"x = 1\n" * 40


def _hammer(folder: str, salt: bytes, secret: bytes, rounds: int) -> None:
    results = ResultCache(Path(folder), salt, secret)
    diagnostics = [
        Diagnostic("m.py", line, 0, line, 4, "DVL101", "x" * 2000) for line in range(1, 40)
    ]
    for _ in range(rounds):
        results.put(SHARED, "m.py", diagnostics)


def test_concurrent_writers_never_expose_a_partial_entry(tmp_path: Path) -> None:
    results = ResultCache.open(tmp_path, SETTINGS)
    key = results.key(SHARED, "m.py")
    context = multiprocessing.get_context("spawn")
    writers = [
        context.Process(
            target=_hammer, args=(str(results.folder), results.salt, results.secret, 150)
        )
        for _ in range(3)
    ]
    for writer in writers:
        writer.start()
    seen = 0
    while any(writer.is_alive() for writer in writers):
        diagnostics = results.get(SHARED, "m.py")
        if diagnostics is not None:
            assert len(diagnostics) == 39
            seen += 1
    for writer in writers:
        writer.join()
        assert writer.exitcode == 0
    assert results.get(SHARED, "m.py") is not None
    leftovers = [p.name for p in (results.folder / key[:2]).iterdir() if p.name != key[2:]]
    assert leftovers == []  # no temporary files left behind


def test_entries_are_json_not_pickle(tmp_path: Path) -> None:
    results = ResultCache.open(tmp_path, SETTINGS)
    results.put(b"x", "m.py", [Diagnostic("m.py", 1, 0, 1, 1, "DVL101", "message")])
    entry = read_entry(results, entry_path(results, b"x", "m.py"))
    assert entry["path"] == "m.py" and entry["diagnostics"][0]["severity"] == "error"


def test_editing_an_imported_module_relints_its_importers_and_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    projects = ROOT / "fixtures" / "projects"
    (tmp_path / "pyproject.toml").write_text("")
    moving, forgetting = projects / "helper_moves_batch", projects / "helper_forgets_labels"
    (tmp_path / "utils.py").write_text((moving / "utils.py").read_text())
    (tmp_path / "train.py").write_text((forgetting / "train.py").read_text())
    (tmp_path / "other.py").write_text(DISCARDED)
    assert "train.py" not in run(tmp_path, capsys, "--jobs", "1")
    linted = record_linting(monkeypatch)
    (tmp_path / "utils.py").write_text((forgetting / "utils.py").read_text())
    assert "train.py:17:37: DVL301" in run(tmp_path, capsys, "--jobs", "1")
    assert sorted(linted) == ["train.py", "utils.py"]


# a cache folder is input from whoever can write it ----------------------------------


def test_an_unsigned_entry_that_hides_findings_is_a_miss(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A well-formed entry that lists no findings, planted by someone without the secret."""
    argv, cold, results, entry = cold_run_and_an_entry(project, capsys)
    path = project / "m00.py"
    data, name = path.read_bytes(), str(path)
    planted = {**read_entry(results, entry), "diagnostics": []}
    text = json.dumps(planted).encode()
    for signature in (b"", bytes(32), sign(b"another user's secret".ljust(32), text)):
        entry.write_bytes(signature + text)
        assert results.get(data, name) is None
        assert cli.main(argv) == 1
        assert capsys.readouterr().out == cold


@pytest.fixture
def fresh_secret(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """A home of its own for the secret, read anew by this test's runs."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    cache_secret.cache_clear()
    yield tmp_path / "state" / "devlint" / "cache-key"
    cache_secret.cache_clear()


def test_the_secret_is_made_once_readable_by_its_owner_only(fresh_secret: Path) -> None:
    secret = cache_secret()
    assert secret is not None and fresh_secret.read_bytes() == secret
    assert stat.S_IMODE(fresh_secret.stat().st_mode) == 0o600
    cache_secret.cache_clear()
    assert cache_secret() == secret


@pytest.mark.parametrize("problem", ["others-may-read", "not-a-key", "a-link"])
def test_a_secret_others_could_know_means_no_cache(
    fresh_secret: Path, tmp_path: Path, problem: str
) -> None:
    fresh_secret.parent.mkdir(parents=True)
    if problem == "a-link":
        (tmp_path / "elsewhere").write_bytes(b"k" * 32)
        (tmp_path / "elsewhere").chmod(0o600)
        fresh_secret.symlink_to(tmp_path / "elsewhere")
    else:
        fresh_secret.write_bytes(b"k" * (32 if problem == "others-may-read" else 5))
        fresh_secret.chmod(0o644 if problem == "others-may-read" else 0o600)
    assert cache_secret() is None
    assert ResultCache.open(tmp_path, SETTINGS) is None
    assert not (tmp_path / CACHE_DIR_NAME).exists()


def test_the_secret_can_come_from_the_environment(
    fresh_secret: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI: a repository secret, the same on every machine that may use the cache."""
    monkeypatch.setenv("DEVLINT_CACHE_KEY", "from the CI's secrets")
    first = cache_secret()
    cache_secret.cache_clear()
    monkeypatch.setenv("DEVLINT_CACHE_KEY", "another")
    assert first is not None and cache_secret() not in (None, first)
    assert not fresh_secret.exists()


def warned_run(project: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Run twice over ``project`` with its cache in ``project/cache``; the warning printed."""
    argv = ["check", "--jobs", "1", "--cache-dir", str(project / "cache"), str(project)]
    assert cli.main(argv) == 1
    first = capsys.readouterr()
    assert cli.main(argv) == 1
    second = capsys.readouterr()
    assert second.out == first.out and "DVL201" in first.out
    return first.err


def test_a_cache_folder_of_another_user_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project / "cache" / CACHE_DIR_NAME
    root.mkdir(parents=True)
    monkeypatch.setattr(cache_module, "_user_id", lambda: os.geteuid() + 1)
    linted = record_linting(monkeypatch)
    warning = warned_run(project, capsys)
    assert f"devlint: warning: not using the cache: {root} belongs to another user" in warning
    assert list(root.iterdir()) == []
    assert len(linted) == 40  # both runs lint every file


def test_a_cache_folder_anybody_may_write_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project / "cache" / CACHE_DIR_NAME
    root.mkdir(parents=True)
    root.chmod(0o777)
    linted = record_linting(monkeypatch)
    warning = warned_run(project, capsys)
    assert f"not using the cache: {root} may be written by anybody (mode 777)" in warning
    assert list(root.iterdir()) == []
    assert len(linted) == 40


def test_a_cache_folder_linked_out_of_its_directory_is_refused(
    project: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (project / "cache").mkdir()
    (project / "cache" / CACHE_DIR_NAME).symlink_to(elsewhere)
    warning = warned_run(project, capsys)
    assert "is a symbolic link to" in warning and "outside" in warning
    assert list(elsewhere.iterdir()) == []  # no .gitignore, CACHEDIR.TAG or entries there


def test_a_cache_folder_linked_within_its_directory_is_used(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "cache" / "real").mkdir(parents=True)
    (project / "cache" / CACHE_DIR_NAME).symlink_to("real")
    assert "warning" not in warned_run(project, capsys)
    assert (project / "cache" / "real" / "CACHEDIR.TAG").exists()


def test_a_new_cache_folder_is_not_writable_by_others_whatever_the_umask(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = os.umask(0)
    try:
        warned_run(project, capsys)
    finally:
        os.umask(old)
    mode = stat.S_IMODE((project / "cache" / CACHE_DIR_NAME).stat().st_mode)
    assert not mode & 0o022
