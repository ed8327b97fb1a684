"""What LibCST can parse in bounded time and memory: a cheap check before parsing.

LibCST's native parser needs about 3 KB of memory per token while it parses,
is superlinear on long chains (3,000 chained method calls take 16 s, 6,000
`+` 17 s, 6,000 `**` 4 GB) and overflows the C stack, killing the process, on
deep nesting (3,000 nested brackets, 15,000 `not` or `and`). Real code is far
from all of these limits (on 2.3 million lines of PyTorch projects: at most 9
nested brackets and 50 links in one chain); generated or hostile files are
not. A file over a limit is skipped with a notice naming the limit, instead
of taking minutes, gigabytes, or the whole run down with it.

The check runs at C speed on ordinary files (about 2% of the parse): strings
and comments are blanked (a string is one token, however long), tokens are
counted only in files long enough to have too many, bracket depth is measured
by deleting innermost pairs layer by layer, and only a stretch without commas
or semicolons that holds more links than the limit is scanned token by token
for the longest chain, so long flat lists and dict literals, which LibCST
parses in linear time, never count as chains.
"""

from __future__ import annotations

import re

MAX_TOKENS = 150_000
"""About 15,000 lines of dense code; LibCST peaks near 450 MB on it."""
MAX_DEPTH = 200
"""Nested brackets; CPython itself refuses more ("too many nested parentheses")."""
MAX_CHAIN = 1_000
"""Operators, attribute accesses, calls and subscripts chained in one expression."""

_WORDS = re.compile(r"\w+|[^\w\s]")
_STRINGS_AND_COMMENTS = re.compile(
    r"#[^\n]*"
    r"|'''[\s\S]*?'''"
    r'|"""[\s\S]*?"""'
    r"|'(?:\\.|[^'\\\n])*'"
    r'|"(?:\\.|[^"\\\n])*"'
)
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")
_INNERMOST_PAIRS = re.compile(r"\(\)|\[\]|\{\}")
_SEPARATORS = re.compile(r"[,;]")
_LINK = r"\*\*|//|<<|>>|[-+*/%@&|^~<>]|\.[ \t]*[A-Za-z_]|\b(?:and|or|not|if|else|lambda|await)\b"
_LINKS = re.compile(rf"{_LINK}|(?<=[\w)\]}}])[(\[]")  # a call or subscript too
_CHAIN_TOKENS = re.compile(rf"(?P<open>[(\[{{])|(?P<close>[)\]}}])|(?P<newline>\n)|{_LINK}")


def complexity_problem(source: str) -> str | None:
    """Why LibCST should not parse ``source``, or None when it is within every limit."""
    code, strings = _STRINGS_AND_COMMENTS.subn(" ", source)  # a string is one token
    if len(code) + strings > MAX_TOKENS:  # fewer characters than that: fewer tokens too
        tokens = strings + _WORDS.subn("", code)[1]  # counts without building a list
        if tokens > MAX_TOKENS:
            return (
                f"file too large to analyse: about {tokens:,} tokens, "
                f"over the limit of {MAX_TOKENS:,}"
            )
    if _bracket_depth(code) > MAX_DEPTH:
        return f"brackets nested too deeply to analyse: over {MAX_DEPTH} levels"
    chain = _longest_chain(code)
    if chain > MAX_CHAIN:
        return (
            f"expression too long to analyse: {chain:,} chained operators or calls, "
            f"over the limit of {MAX_CHAIN:,}"
        )
    return None


def _bracket_depth(code: str) -> int:
    """How deeply brackets nest, up to ``MAX_DEPTH + 1``: innermost pairs go, layer by layer."""
    brackets = _NOT_BRACKETS.sub("", code)
    depth = 0
    while brackets and depth <= MAX_DEPTH:
        fewer = _INNERMOST_PAIRS.sub("", brackets)
        if len(fewer) == len(brackets):  # only unbalanced brackets are left
            break
        brackets = fewer
        depth += 1
    return depth


def _longest_chain(code: str) -> int:
    """The most operators and trailers chained in one expression (see ``_chain_in``).

    Only a stretch without commas and semicolons can hold a long chain; only
    one with more links than the limit in all is scanned token by token.
    """
    longest = 0
    for stretch in _SEPARATORS.split(code):
        if len(stretch) > MAX_CHAIN and len(_LINKS.findall(stretch)) > MAX_CHAIN:
            longest = max(longest, _chain_in(stretch))
    return longest


def _chain_in(stretch: str) -> int:
    """The longest chain in a stretch of code, counted per bracket level.

    A bracketed group adds one link to the chain around it when it is a call
    or a subscript (it follows a name or a closing bracket); what is inside
    counts on its own level. A line end outside brackets ends the statement.
    """
    chains = [0]
    longest = 0
    for match in _CHAIN_TOKENS.finditer(stretch):
        kind = match.lastgroup
        if kind == "open":
            start = match.start()
            before = stretch[start - 1] if start else " "
            if before.isalnum() or before in "_)]}":
                chains[-1] += 1
            chains.append(0)
        elif kind == "close":
            if len(chains) > 1:
                chains.pop()
            else:  # the stretch began inside brackets that close here
                chains[0] = 0
        elif kind == "newline":
            if len(chains) == 1:
                chains[0] = 0
        else:
            chains[-1] += 1
        longest = max(longest, chains[-1])
    return longest
