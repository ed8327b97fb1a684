"""Parsed trees between runs: a run given files reads back the trees of what it imports,
and nothing stored in the cache folder can run code, hang a run or pass for a tree."""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import tempfile
import tracemalloc
import zlib
from collections.abc import Iterator
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devlint.config import Settings
from devlint.frontends import cli
from devlint.inputs import result_cache as cache_module
from devlint.inputs import tree_cache as tree_cache_module
from devlint.inputs.cache_signing import cache_secret, sign
from devlint.inputs.result_cache import ResultCache
from devlint.inputs.tree_cache import TreeCache
from devlint.project import index as project_index

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "fixtures" / "projects" / "helper_forgets_labels"
TEXT = "import torch\n\nx = torch.zeros(3)  # a comment\ny = [x, (x)]\n"
SECRET = b"s" * 32


@pytest.fixture
def trees(tmp_path: Path) -> TreeCache:
    folder = tmp_path / "trees"
    folder.mkdir()
    return TreeCache(folder, SECRET)


def stored_pickle(trees: TreeCache, text: str, pickled: bytes) -> None:
    """Store an entry for ``text`` holding ``pickled``, as ``TreeCache.put`` lays one out and
    signs it (the checks behind the signature: a bug of an older devlint, say)."""
    key = tree_cache_module._key(text)
    entry = trees.folder / key[:2] / key[2:]
    entry.parent.mkdir(exist_ok=True)
    data = key.encode() + zlib.compress(pickled)
    entry.write_bytes(sign(trees.secret, data) + data)


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
    assert TreeCache(folder, cache_secret()).get(utils) is None


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
    trees = TreeCache(tmp_path / "missing" / "folder", SECRET)
    trees.put(TEXT, cst.parse_module(TEXT))
    assert trees.get(TEXT) is None


def test_a_new_code_version_removes_the_old_versions_trees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Trees are laid out as result entries are, so the old version's folder is devlint's
    own and goes; a folder holding anything else would stay."""
    old = ResultCache.open(tmp_path, Settings())
    TreeCache(old.folder, old.secret).put(TEXT, cst.parse_module(TEXT))
    assert TreeCache(old.folder, old.secret).get(TEXT) is not None
    monkeypatch.setattr(cache_module, "code_fingerprint", lambda: "f" * 64)
    new = ResultCache.open(tmp_path, Settings())
    assert not old.folder.exists()
    assert TreeCache(new.folder, new.secret).get(TEXT) is None


# planted entries: never unpickled -----------------------------------------------------

BIG_TEXT = "".join(
    f"x{index} = torch.zeros({index}, device=d)  # {index}\n" for index in range(3000)
)


def colliding_integers(count: int) -> bytes:
    """A set of integers that all hash to 0: building it takes time quadratic in ``count``."""
    modulus = sys.hash_info.modulus
    return pickle.dumps({modulus * index for index in range(count)}, protocol=5)


def empty_sets(count: int) -> bytes:
    """``count`` EMPTY_SET opcodes (a byte each, a couple of hundred bytes of memory each),
    then a STOP: a few kilobytes compressed, hundreds of megabytes unpickled."""
    return b"\x80\x05" + b"\x8f" * count + b"."


ADVERSARIAL = {
    "colliding-integers": colliding_integers(4_000),
    "empty-sets": empty_sets(len(BIG_TEXT) * 60),
    "code": pickle.dumps(_Runs("/nonexistent/devlint-ran")),
    "not-a-pickle": b"\x00" * 1000,
}


def planted(trees: TreeCache, text: str, content: bytes) -> None:
    """An entry as someone without the user's secret could write it."""
    key = tree_cache_module._key(text)
    entry = trees.folder / key[:2] / key[2:]
    entry.parent.mkdir(exist_ok=True)
    entry.write_bytes(content)


def peak_memory_of(load) -> int:
    tracemalloc.start()
    try:
        load()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@contextlib.contextmanager
def counting_unpickles() -> Iterator[list[int]]:
    """How many times the reader starts unpickling, within the block."""
    calls: list[int] = []
    real_load = tree_cache_module._NodesOnly.load

    def load(self: tree_cache_module._NodesOnly) -> object:
        calls.append(1)
        return real_load(self)

    tree_cache_module._NodesOnly.load = load  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        tree_cache_module._NodesOnly.load = real_load  # type: ignore[method-assign]


@pytest.mark.parametrize("pickled", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_a_planted_pickle_is_never_unpickled_and_costs_less_than_a_clean_load(
    trees: TreeCache, pickled: bytes
) -> None:
    """The issue's pickles (minutes of hashing, gigabytes of sets) and others, planted
    without the user's secret: each is refused before it is unpacked."""
    trees.put(BIG_TEXT, cst.parse_module(BIG_TEXT))
    with counting_unpickles() as unpickled:
        clean = peak_memory_of(lambda: trees.get(BIG_TEXT))
        assert unpickled == [1]
        key = tree_cache_module._key(BIG_TEXT).encode()
        body = key + zlib.compress(pickled)
        for content in (body, bytes(32) + body, sign(b"another user".ljust(32), body) + body):
            planted(trees, BIG_TEXT, content)
            assert peak_memory_of(lambda: trees.get(BIG_TEXT)) < clean  # far under 10 times
            assert trees.get(BIG_TEXT) is None
        assert unpickled == [1]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.binary(max_size=4096),
        st.tuples(st.binary(min_size=32, max_size=32), st.binary(max_size=2048)).map(
            lambda parts: parts[0] + tree_cache_module._key(TEXT).encode() + zlib.compress(parts[1])
        ),
    )
)
def test_random_entries_are_misses_that_unpickle_nothing(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        trees = TreeCache(Path(folder), SECRET)
        planted(trees, TEXT, content)
        with counting_unpickles() as unpickled:
            assert trees.get(TEXT) is None
        assert unpickled == []
