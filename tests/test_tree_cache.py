"""Parsed trees between runs: a run given files reads back the trees of what it imports,
and nothing stored in the cache folder can run code, hang a run or pass for a tree."""

from __future__ import annotations

import os
import pickle
import zlib
from pathlib import Path

import libcst as cst
import pytest

from devlint import cache as cache_module
from devlint import project_index
from devlint import tree_cache as tree_cache_module
from devlint.cache import ResultCache
from devlint.config import Settings
from devlint.frontends import cli
from devlint.tree_cache import TreeCache

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "fixtures" / "projects" / "helper_forgets_labels"
TEXT = "import torch\n\nx = torch.zeros(3)  # a comment\ny = [x, (x)]\n"


@pytest.fixture
def trees(tmp_path: Path) -> TreeCache:
    folder = tmp_path / "trees"
    folder.mkdir()
    return TreeCache(folder)


def stored_pickle(trees: TreeCache, text: str, pickled: bytes) -> None:
    """Plant an entry for ``text`` holding ``pickled``, as ``TreeCache.put`` lays one out."""
    key = tree_cache_module._key(text)
    entry = trees.folder / key[:2] / key[2:]
    entry.parent.mkdir(exist_ok=True)
    entry.write_bytes(key.encode() + zlib.compress(pickled))


def test_a_stored_tree_reads_back_as_the_parse_of_its_text(trees: TreeCache) -> None:
    trees.put(TEXT, cst.parse_module(TEXT))
    tree = trees.get(TEXT)
    assert tree is not None and tree.deep_equals(cst.parse_module(TEXT))
    assert tree.code == TEXT
    assert trees.get(TEXT + "\n") is None


def test_a_run_given_files_reads_back_the_trees_of_its_imports(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    parsed: list[str],
) -> None:
    """``utils.py`` is parsed by the first run only; the finding that rests on it stays."""
    (tmp_path / "pyproject.toml").write_text("")
    for name in ("train.py", "utils.py"):
        (tmp_path / name).write_text((PROJECT / name).read_text())
    utils = (tmp_path / "utils.py").read_text()
    reports = []
    for run in range(2):
        monkeypatch.setattr(project_index, "_INDEXES", {})  # a new process
        (tmp_path / "train.py").write_text((PROJECT / "train.py").read_text() + "#" * run)
        cli.main(["check", "--cache-dir", str(tmp_path), str(tmp_path / "train.py")])
        reports.append(capsys.readouterr().out)
    assert "train.py:17:37: DVL301" in reports[0]
    assert reports[1] == reports[0]
    assert parsed.count(utils) == 1


def test_a_run_given_a_folder_stores_no_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(project_index, "_INDEXES", {})
    (tmp_path / "pyproject.toml").write_text("")
    for name in ("train.py", "utils.py"):
        (tmp_path / name).write_text((PROJECT / name).read_text())
    cli.main(["check", "--cache-dir", str(tmp_path / "cache"), str(tmp_path)])
    assert "DVL301" in capsys.readouterr().out
    cache = tmp_path / "cache" / ".devlint_cache"
    (folder,) = (path for path in cache.iterdir() if path.is_dir())
    utils = (tmp_path / "utils.py").read_text()
    assert TreeCache(folder).get(utils) is None


class _Runs:
    """Unpickling this calls ``os.mkdir`` (what a planted entry would try)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.mkdir, (self.path,))


def test_an_entry_that_would_run_code_is_a_miss_and_runs_nothing(
    trees: TreeCache, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    stored_pickle(trees, TEXT, pickle.dumps(_Runs(str(marker))))
    assert trees.get(TEXT) is None
    assert not marker.exists()
    pickle.loads(pickle.dumps(_Runs(str(marker))))
    assert marker.exists()  # the marker does show code that ran


def shared_node(text: str) -> cst.Module:
    """``text`` (two equal lines) parsed, with one node object standing for both lines."""
    module = cst.parse_module(text)
    return module.with_changes(body=(module.body[0], module.body[0]))


def cycle(text: str) -> cst.Module:
    """``text`` parsed, with a node that holds itself."""
    module = cst.parse_module(text)
    expression = module.body[0].body[0]
    object.__setattr__(expression, "value", expression)
    return module


def hidden_in_a_list(text: str) -> cst.Module:
    """``text`` parsed, with a field holding a list (LibCST's parser makes tuples)."""
    module = cst.parse_module(text)
    object.__setattr__(module, "body", list(module.body))
    return module


@pytest.mark.parametrize(
    "make",
    [
        shared_node,
        cycle,
        hidden_in_a_list,
        lambda text: cst.parse_module(text).body[0],  # a node, but not a module
    ],
)
def test_a_stored_object_that_is_not_a_tree_is_a_miss(trees: TreeCache, make) -> None:
    text = "x\nx\n"
    stored_pickle(trees, text, pickle.dumps(make(text), protocol=5))
    assert trees.get(text) is None
    stored_pickle(trees, text, pickle.dumps(cst.parse_module(text), protocol=5))
    assert trees.get(text) is not None  # the same entry, with the tree, is read


def test_a_tree_deeper_than_the_bound_is_a_miss(
    trees: TreeCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "x = [[[[[1]]]]]\n"
    trees.put(text, cst.parse_module(text))
    assert trees.get(text) is not None
    monkeypatch.setattr(tree_cache_module, "MAX_DEPTH", 12)
    assert trees.get(text) is None


def test_a_damaged_or_misplaced_entry_is_a_miss(trees: TreeCache) -> None:
    trees.put(TEXT, cst.parse_module(TEXT))
    key = tree_cache_module._key(TEXT)
    entry = trees.folder / key[:2] / key[2:]
    whole = entry.read_bytes()
    entry.write_bytes(whole[:-20])
    assert trees.get(TEXT) is None
    other = "y = 1\n"
    stored_pickle(trees, other, b"")
    other_key = tree_cache_module._key(other)
    (trees.folder / other_key[:2] / other_key[2:]).write_bytes(whole)  # another key's entry
    assert trees.get(other) is None


def test_an_entry_that_unpacks_past_its_bound_is_a_miss(trees: TreeCache) -> None:
    """A tree followed by megabytes of zeros (which pickle would ignore) is not unpacked: a
    few kilobytes could otherwise unpack to gigabytes."""
    tree = pickle.dumps(cst.parse_module(TEXT), protocol=5)
    stored_pickle(trees, TEXT, tree)
    assert trees.get(TEXT) is not None
    stored_pickle(trees, TEXT, tree + bytes(8 << 20))
    assert trees.get(TEXT) is None


def test_an_unwritable_folder_is_not_an_error(tmp_path: Path) -> None:
    trees = TreeCache(tmp_path / "missing" / "folder")
    trees.put(TEXT, cst.parse_module(TEXT))
    assert trees.get(TEXT) is None


def test_a_new_code_version_removes_the_old_versions_trees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Trees are laid out as result entries are, so the old version's folder is devlint's
    own and goes; a folder holding anything else would stay."""
    old = ResultCache.open(tmp_path, Settings())
    TreeCache(old.folder).put(TEXT, cst.parse_module(TEXT))
    assert TreeCache(old.folder).get(TEXT) is not None
    monkeypatch.setattr(cache_module, "code_fingerprint", lambda: "f" * 64)
    new = ResultCache.open(tmp_path, Settings())
    assert not old.folder.exists()
    assert TreeCache(new.folder).get(TEXT) is None
