"""Source positions of nodes, five times cheaper than LibCST's PositionProvider.

LibCST finds positions by regenerating the module's code and, for every
token, working out the line and column it reaches (a regular expression per
token, two position objects per node). Here code generation notes only where
each node starts and ends as indexes into the token list; a node's line and
column are worked out when someone asks, from the tokens' running lengths.
The spans are exactly PositionProvider's (a test compares them on every node
of real files); only the bookkeeping is cheaper.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate

import libcst as cst
from libcst._nodes.internal import CodegenState

Span = tuple[tuple[int, int], tuple[int, int]]
_NEWLINE = re.compile(r"\r\n?|\n")  # what LibCST counts as a line break


class NotInModule(KeyError):
    """A node of another module (code of another file the analysis followed)."""


class Positions:
    """``span(node)`` for the nodes of one module; the module is generated once, on first use."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._tokens: dict[cst.CSTNode, tuple[int, int]] | None = None
        self._offsets: list[int] = []  # character offset at which each token starts
        self._code = ""
        self._line_starts: list[int] = []  # character offset at which each line starts

    def span(self, node: cst.CSTNode) -> Span:
        """(line, column) of the start and end of ``node``: 1-based lines, 0-based columns."""
        if self._tokens is None:
            self._generate()
        span = self._tokens.get(node)
        if span is None:
            raise NotInModule(type(node).__name__)
        return self._place(span[0]), self._place(span[1])

    def line_before(self, node: cst.CSTNode) -> str:
        """The text of ``node``'s first line before ``node`` (its indentation, if it starts
        the line)."""
        if self._tokens is None:
            self._generate()
        span = self._tokens.get(node)
        if span is None:
            raise NotInModule(type(node).__name__)
        offset = self._offsets[span[0]]
        return self._code[self._line_starts[self._line_index(offset)] : offset]

    def _generate(self) -> None:
        state = _TokenRecorder(self.module.default_indent, self.module.default_newline)
        self.module._codegen(state)
        self._tokens = state.spans
        self._offsets = list(accumulate(map(len, state.tokens), initial=0))
        self._code = "".join(state.tokens)
        self._line_starts = [0, *(match.end() for match in _NEWLINE.finditer(self._code))]

    def _place(self, token: int) -> tuple[int, int]:
        offset = self._offsets[token]
        line = self._line_index(offset)
        return line + 1, offset - self._line_starts[line]

    def _line_index(self, offset: int) -> int:
        """The 0-based line holding the character at ``offset``."""
        return bisect_right(self._line_starts, offset) - 1


@dataclass
class _TokenRecorder(CodegenState):
    """Code generation that notes, per node, the indexes of its first and past-last tokens.

    Mirrors ``PositionProvidingCodegenState``: a node's syntactic position,
    when it records one, wins over the whitespace-inclusive one.
    """

    spans: dict[cst.CSTNode, tuple[int, int]] = field(default_factory=dict)
    _starts: list[int] = field(default_factory=list)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        if node not in self.spans:
            self.spans[node] = (start, len(self.tokens))

    def pop_trailing_newline(self) -> None:
        """Keep the module's last newline: PositionProvider counts it too."""

    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _SyntacticSpan:
        return _SyntacticSpan(self, node, start_node, end_node)


class _SyntacticSpan:
    """Notes a node's syntactic span around the code generated inside it.

    A class rather than ``@contextmanager``: LibCST enters one for most nodes,
    and a generator-based context manager costs a fifth of the whole pass.
    """

    __slots__ = ("end_node", "node", "recorder", "start", "start_node")

    def __init__(
        self,
        recorder: _TokenRecorder,
        node: cst.CSTNode,
        start_node: cst.CSTNode | None,
        end_node: cst.CSTNode | None,
    ) -> None:
        self.recorder, self.node = recorder, node
        self.start_node, self.end_node = start_node, end_node
        self.start = 0

    def __enter__(self) -> None:
        self.start = len(self.recorder.tokens)

    def __exit__(self, *exception: object) -> None:
        spans = self.recorder.spans
        start = self.start if self.start_node is None else spans[self.start_node][0]
        end = len(self.recorder.tokens) if self.end_node is None else spans[self.end_node][1]
        spans[self.node] = (start, end)
