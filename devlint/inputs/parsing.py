"""LibCST's parser, without the checks LibCST runs on every node as it is made.

Each LibCST node checks itself when constructed (``CSTNode.__post_init__`` calls
``_validate``): that catches trees built by hand that no source could give. A tree the
parser builds from source passes them by construction, as LibCST's own comment there
says, and they cost a tenth to a sixth of a parse. So the trees devlint parses skip
them, while the nodes it builds itself (fixes) are still checked. Checked on the
benchmark corpora: every file is accepted or refused alike, and parses to the same
code, with the checks and without (``docs/performance.md``).

The checks are switched off for the length of a parse only, under a lock: two
threads (the language server's lint and its main loop) never see each other's switch
half done. A node another thread makes meanwhile goes unchecked, which changes nothing
for a valid node.
"""

from __future__ import annotations

import threading

import libcst as cst

_SWITCH = threading.Lock()


def parse_module(source: str) -> cst.Module:
    """``libcst.parse_module(source)``, its nodes unchecked; raises what it raises."""
    with _SWITCH:
        checked = cst.CSTNode.__dict__["__post_init__"]
        cst.CSTNode.__post_init__ = _unchecked  # type: ignore[method-assign]
        try:
            return cst.parse_module(source)
        finally:
            cst.CSTNode.__post_init__ = checked  # type: ignore[method-assign]


def _unchecked(node: cst.CSTNode) -> None:
    """What ``CSTNode.__post_init__`` does during a parse: nothing."""
