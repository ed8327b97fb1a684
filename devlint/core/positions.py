"""Source positions of reported nodes without generating code for the whole module.

LibCST computes positions by regenerating the code of the entire module,
which costs more than parsing it. A finding needs the positions of a few
nodes only: this regenerates just the top-level statement holding each one,
and places that statement with the line numbers of ``ast.parse`` (fast, in C).
Anything unexpected falls back to LibCST's own PositionProvider.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

Span = tuple[tuple[int, int], tuple[int, int]]
MAX_STATEMENTS = 4  # past this many statements, one pass over the whole module is cheaper


class Positions:
    """``span(node)`` for nodes of one module, computed per top-level statement on demand."""

    def __init__(self, module: cst.Module, source: str | None) -> None:
        self.module = module
        self.source = source
        self._owner: dict[int, int] | None = None  # id(node) -> index of its top-level statement
        self._walked = 0  # top-level statements whose nodes are in _owner
        self._first_lines: list[int] | None = None  # first code line of each statement
        self._ranges: dict[int, Mapping[cst.CSTNode, CodeRange]] = {}
        self._whole: Mapping[cst.CSTNode, CodeRange] | None = None

    def span(self, node: cst.CSTNode) -> Span:
        if self._whole is None and self._prepare():
            index = self._owner_of(node)
            if index is not None and (index in self._ranges or len(self._ranges) < MAX_STATEMENTS):
                return self._statement_span(index, node)
        return _as_span(self._whole_module()[node])

    def _owner_of(self, node: cst.CSTNode) -> int | None:
        """The top-level statement holding ``node``, walking statements only as far as needed."""
        if self._whole is not None:
            return None
        owner = self._owner
        body = self.module.body
        while id(node) not in owner and self._walked < len(body):
            stack: list[cst.CSTNode] = [body[self._walked]]
            while stack:
                current = stack.pop()
                owner[id(current)] = self._walked
                stack.extend(current.children)
            self._walked += 1
        return owner.get(id(node))

    def _whole_module(self) -> Mapping[cst.CSTNode, CodeRange]:
        if self._whole is None:
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._whole = wrapper.resolve(PositionProvider)
        return self._whole

    def _prepare(self) -> bool:
        """Map nodes to top-level statements and find where each starts; False to give up."""
        if self._owner is not None:
            return True
        first_lines = None
        if self.source is not None:
            try:
                first_lines = _first_code_lines(self.module, ast.parse(self.source))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                first_lines = None
        if first_lines is None:
            self._whole_module()
            return False
        self._owner, self._first_lines = {}, first_lines
        return True

    def _statement_span(self, index: int, node: cst.CSTNode) -> Span:
        ranges = self._ranges.get(index)
        statement = self.module.body[index]
        if ranges is None:
            alone = self.module.with_changes(body=[statement], header=[], footer=[])
            ranges = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
            self._ranges[index] = ranges
        shift = self._first_lines[index] - _first_code_line_alone(statement)
        (line, column), (end_line, end_column) = _as_span(ranges[node])
        return (line + shift, column), (end_line + shift, end_column)


def _as_span(where: CodeRange) -> Span:
    return (where.start.line, where.start.column), (where.end.line, where.end.column)


def _first_code_lines(module: cst.Module, tree: ast.Module) -> list[int] | None:
    """The line where each top-level statement's code begins, from ``ast`` (None: mismatch)."""
    body = tree.body
    lines: list[int] = []
    position = 0
    for statement in module.body:
        if position >= len(body):
            return None
        node = body[position]
        decorators = getattr(node, "decorator_list", None)
        lines.append(decorators[0].lineno if decorators else node.lineno)
        position += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
    return lines if position == len(body) else None


def _first_code_line_alone(statement: cst.BaseStatement) -> int:
    """The line where a statement's code begins when it is generated on its own
    (for a decorated definition: its first decorator, as ``ast`` counts it)."""
    line = 1 + len(getattr(statement, "leading_lines", ()))
    decorators = getattr(statement, "decorators", ())
    if decorators:
        line += len(decorators[0].leading_lines)
    return line
