"""The parsed trees of project modules, kept between runs beside the result cache.

A run that lints a few files (pre-commit on the files a commit changed, ``devlint
check train.py``) spends most of its time parsing the project modules they import: the
result cache answers the files it has seen, not the modules their analysis runs. Reading
a tree back and checking it costs under half of parsing its text again; storing one, about
half.

A tree is keyed by the text it was parsed from. It lives in the result cache's folder for
this code version, so a new devlint, LibCST or Python leaves all of them behind with the
results, and is written the same way (atomically, failures ignored).

Pickle, read as untrusted input. Whoever can write a cache folder could plant an entry,
so every entry is signed with the user's secret (``devlint.inputs.cache_signing``) and one whose
signature does not verify is never unpickled: a pickle can build anything the unpickler
knows (sets of colliding integers that take minutes to hash, millions of empty sets from
a few kilobytes), and only the signature keeps those out. What is signed is still
checked, so that no entry can run code or hang a run; a stored tree is a miss unless:

- it unpickles with nothing but LibCST's node classes and ``MaybeSentinel``: the only code
  it can call is their constructors;
- it is a tree: a ``Module`` whose every node is reached once and at most ``MAX_DEPTH``
  levels down (a cycle, or a node shared between parents, could make a walk endless or
  exponential), with every field a node, a tuple of nodes, a string, a bool, None or
  ``MaybeSentinel``;
- its entry names its key, is at most ``MAX_ENTRY_BYTES`` and unpacks to at most
  ``MAX_BYTES_PER_CHARACTER`` bytes a character of its text (and 64 KiB).

What these checks cannot prove is that a tree is the parse of its text: comparing the
two would cost about a third of a parse, most of what reading a tree back saves. The
signature proves that this user's devlint stored it.
"""

from __future__ import annotations

import contextlib
import copyreg
import dataclasses
import gc
import hashlib
import io
import os
import pickle
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from devlint.inputs.cache_signing import SIGNATURE_BYTES, sign, verified
from devlint.inputs.result_cache import ResultCache, read_small_file, write_atomically

if TYPE_CHECKING:  # LibCST is imported when a tree is read or written, not with the cache
    import libcst as cst

MAX_ENTRY_BYTES = 16 * 1024 * 1024
MAX_BYTES_PER_CHARACTER = 64
"""A pickled tree takes about 10 bytes a character of its text; far more is no tree."""
MAX_DEPTH = 1_000
"""Levels of nodes; real modules within devlint's limits reach a few dozen."""
_SALT = b"devlint tree\0"
_HEADER = SIGNATURE_BYTES + 64  # the signature, then the key (hexadecimal)
_PROTOCOL = 5
_COMPRESSION = 1  # fast: a tenth of the pickle's size for a fortieth of the time to parse


@dataclass(frozen=True)
class TreeCache:
    """Trees in ``folder`` (the result cache's folder for this code version), signed with
    ``secret``; new ones are stored only if ``stores`` (see ``for_run``)."""

    folder: Path
    secret: bytes = field(repr=False)
    stores: bool = True

    @classmethod
    def for_run(cls, results: ResultCache, paths: list[Path]) -> TreeCache:
        """The trees of a run over ``paths``, beside its ``results``. A run given files only
        (pre-commit, ``devlint check train.py``) stores the trees of the modules it parses.
        A run given a folder reads trees but stores none: it lints most of the modules it
        imports, the result cache answers those next time, and storing every tree would
        cost it a tenth more."""
        stores = not any(os.path.isdir(path) for path in paths)  # isdir: never raises
        return cls(results.folder, results.secret, stores)

    def get(self, text: str) -> cst.Module | None:
        """The stored tree of ``text``; None when there is none or it does not hold up."""
        key = _key(text)
        try:
            entry = read_small_file(self._entry(key), _HEADER + MAX_ENTRY_BYTES)
            signed = verified(self.secret, entry)
            if signed is None or not signed.startswith(key.encode()):
                return None  # not stored by this user's devlint, or moved from another key
            unpacker = zlib.decompressobj()
            limit = MAX_BYTES_PER_CHARACTER * len(text) + 65_536  # class names: a fixed cost
            pickled = unpacker.decompress(signed[len(key) :], limit)
            if unpacker.unconsumed_tail or not unpacker.eof:
                return None
            tree = _NodesOnly(io.BytesIO(pickled)).load()
        except Exception:  # OSError, a damaged entry, a constructor refusing what it was given
            return None
        return tree if _is_tree(tree) else None

    def put(self, text: str, tree: cst.Module) -> None:
        """Store ``tree``, parsed from ``text``, if this run stores trees; a failure to write
        is ignored."""
        if not self.stores:
            return
        key = _key(text)
        buffer = io.BytesIO()
        pickler = pickle.Pickler(buffer, protocol=_PROTOCOL)
        pickler.dispatch_table = _REDUCERS
        try:
            pickler.dump(tree)
        except RecursionError:  # deeper than pickle goes: parsed again next time
            return
        data = key.encode() + zlib.compress(buffer.getvalue(), _COMPRESSION)
        with contextlib.suppress(OSError):
            self._entry(key).parent.mkdir(exist_ok=True)
            write_atomically(self._entry(key), sign(self.secret, data) + data)

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / key[2:]


def _key(text: str) -> str:
    digest = hashlib.blake2b(_SALT, digest_size=32)
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


class _NodesOnly(pickle.Unpickler):
    """An unpickler that finds LibCST's node classes and ``MaybeSentinel``, nothing else."""

    def find_class(self, module: str, name: str) -> Any:
        found = _allowed().get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"not a LibCST node: {module}.{name}")
        return found


@cache
def _allowed() -> dict[tuple[str, str], type]:
    """Every LibCST node class by (module, name), and ``MaybeSentinel``: the classes their
    modules name (LibCST remakes each node class with slots, and the first make is still
    among ``CSTNode``'s subclasses)."""
    import libcst as cst

    classes: dict[tuple[str, str], type] = {}
    todo: list[type] = [cst.CSTNode]
    while todo:
        kind = todo.pop()
        if getattr(sys.modules.get(kind.__module__), kind.__qualname__, None) is kind:
            classes[(kind.__module__, kind.__qualname__)] = kind
        todo += kind.__subclasses__()
    classes[(cst.MaybeSentinel.__module__, cst.MaybeSentinel.__qualname__)] = cst.MaybeSentinel
    return classes


def _is_tree(root: object) -> bool:
    """Whether ``root`` is a ``Module`` whose nodes are each reached once, no deeper than
    ``MAX_DEPTH``, holding nothing but what LibCST's parser puts in nodes. A level at a time,
    through ``gc.get_referents`` (what a node holds: its fields' values, and its class)."""
    import libcst as cst

    nodes, holdable = _kinds()
    if type(root) is not cst.Module:
        return False
    seen = {id(root)}
    level: list[object] = [root]
    for _ in range(MAX_DEPTH):
        held = gc.get_referents(*level)
        if not set(map(type, held)) <= holdable:
            return False
        in_tuples = gc.get_referents(*[value for value in held if type(value) is tuple])
        if not set(map(type, in_tuples)) <= nodes:
            return False
        level = [value for value in held if type(value) in nodes] + in_tuples
        if not level:
            return True
        before = len(seen)
        seen.update(map(id, level))
        if len(seen) != before + len(level):
            return False  # a node reached twice: shared, or in a cycle
    return False


@cache
def _kinds() -> tuple[frozenset[type], frozenset[type]]:
    """The node classes, and the types of what a node may hold (a node's class is an
    ``ABCMeta``)."""
    import libcst as cst

    nodes = frozenset(kind for kind in _allowed().values() if kind is not cst.MaybeSentinel)
    leaves = {str, bool, type(None), tuple, cst.MaybeSentinel, type(cst.CSTNode)}
    return nodes, frozenset(nodes | leaves)


class _Reducers(dict):
    """``pickle.Pickler.dispatch_table``: a node pickled by its fields, as LibCST's own
    ``__getstate__`` does but in half the time (it calls ``dataclasses.fields`` per node)."""

    def __missing__(self, kind: type) -> Callable[[object], tuple[object, ...]]:
        import libcst as cst

        if not (isinstance(kind, type) and issubclass(kind, cst.CSTNode)):
            raise KeyError(kind)
        names = tuple(field.name for field in dataclasses.fields(kind))
        new = copyreg.__newobj__

        def reduce(node: object) -> tuple[object, ...]:
            return (new, (kind,), {name: getattr(node, name) for name in names})

        self[kind] = reduce
        return reduce


_REDUCERS = _Reducers()
