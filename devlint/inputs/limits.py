"""What LibCST can parse in bounded time and memory: a cheap check before parsing.

LibCST's native parser needs about 3 KB of memory per token while it parses,
is superlinear on long chains (3,000 chained method calls take 16 s, 6,000
`+` 17 s, 6,000 `**` 4 GB) and overflows the C stack, killing the process, on
deep nesting (3,000 nested brackets, 15,000 `not` or `and`). Real code is far
from all of these limits (on 2.3 million lines of PyTorch projects: at most 9
nested brackets and 50 links in one chain); generated or hostile files are
not. A file over a limit is skipped with a notice naming the limit, instead
of taking minutes, gigabytes, or the whole run down with it.

The check must itself stay cheap on any input, so it builds nothing per
character or per token: its memory is a few copies of the text. A file over
``MAX_BYTES`` is refused first. Then, at C speed (about 2% of the parse on
ordinary files): escaped quotes are blanked with ``str.replace``, strings and
comments with patterns that repeat single characters only (a repeated group,
such as "an escape or any other character", costs Python's regex engine about
100 bytes per character of a long string); tokens are counted a slice at a
time, only in files long enough to have too many, and only until there are;
bracket depth is measured over runs of brackets; and only a stretch without
commas or semicolons that holds more links than the limit is scanned token by
token for the longest chain, so long flat lists and dict literals, which
LibCST parses in linear time, never count as chains.
"""

from __future__ import annotations

import itertools
import re

MAX_BYTES = 10_000_000
"""Far above real code (its largest files are well under 1 MB); past it, generated data."""
MAX_NOTEBOOK_BYTES = 100_000_000
"""A notebook also holds its outputs (images, tables): tens of megabytes are real."""


def max_file_bytes(path: object) -> int:
    """The most devlint reads of the file at ``path``: a larger one is skipped unread."""
    return MAX_NOTEBOOK_BYTES if str(path).lower().endswith(".ipynb") else MAX_BYTES


MAX_TOKENS = 150_000
"""About 15,000 lines of dense code; LibCST peaks near 450 MB on it."""
MAX_DEPTH = 200
"""Nested brackets; CPython itself refuses more ("too many nested parentheses")."""
MAX_CHAIN = 1_000
"""Operators, attribute accesses, calls and subscripts chained in one expression."""

_WORDS = re.compile(r"\w+|[^\w\s]")
_STRINGS_AND_COMMENTS = re.compile(  # escaped quotes are blanked before
    r"#[^\n]*"
    r"|'''[\s\S]*?'''"
    r'|"""[\s\S]*?"""'
    r"|'[^'\n]*'"
    r'|"[^"\n]*"'
)
_BRACKET_RUNS = re.compile(r"(?P<open>[(\[{]+)|[)\]}]+")
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")
_BRACKET_STEP = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
_LONG_STRETCH = re.compile(rf"(?<![^,;])[^,;]{{{MAX_CHAIN + 1},}}")
"""Only these can hold a long chain. A stretch starts at the file's start or after a separator:
without the lookbehind the engine retried from every character, scanning to the next comma each
time (a twelfth of devlint's time on real code)."""
_LINK = r"\*\*|//|<<|>>|[-+*/%@&|^~<>]|\.[ \t]*[A-Za-z_]|\b(?:and|or|not|if|else|lambda|await)\b"
_LINKS = re.compile(rf"{_LINK}|(?<=[\w)\]}}])[(\[]")  # a call or subscript too
_CHAIN_TOKENS = re.compile(rf"(?P<open>[(\[{{])|(?P<close>[)\]}}])|(?P<newline>\n)|{_LINK}")
_SLICE = 1 << 16
"""Characters whose tokens are counted at once: the regex engine's list of pieces stays small."""


def complexity_problem(source: str) -> str | None:
    """Why LibCST should not parse ``source``, or None when it is within every limit."""
    size = _utf8_size(source)
    if size > MAX_BYTES:
        return f"file too large to analyse: {size:,} bytes, over the limit of {MAX_BYTES:,}"
    code, strings = _STRINGS_AND_COMMENTS.subn(" ", _blank_escaped_quotes(source))
    if len(code) + strings > MAX_TOKENS:  # fewer characters than that: fewer tokens too
        tokens = _count_tokens(code, strings)
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


def _utf8_size(text: str) -> int:
    """The size of ``text`` in UTF-8; encoded only when its length leaves a doubt."""
    if len(text) > MAX_BYTES or len(text) * 4 <= MAX_BYTES or text.isascii():
        return len(text)  # over anyway, under anyway, or one byte a character
    return len(text.encode("utf-8", "surrogatepass"))


def _blank_escaped_quotes(source: str) -> str:
    """``source`` with escaped backslashes and quotes blanked, so that a string ends at the
    next quote of its kind, found without a pattern for escapes."""
    return source.replace("\\\\", "  ").replace("\\'", "  ").replace('\\"', "  ")


def _count_tokens(code: str, strings: int) -> int:
    """The tokens of ``code`` and its blanked ``strings``, counted a slice at a time; once
    over the limit, the rest is estimated from the part counted (a token cut in two by a
    slice counts twice: an error of one in tens of thousands)."""
    tokens = strings
    for start in range(0, len(code), _SLICE):
        end = min(start + _SLICE, len(code))
        tokens += _WORDS.subn("", code[start:end])[1]
        if tokens > MAX_TOKENS:
            return strings + (tokens - strings) * len(code) // end
    return tokens


def _bracket_depth(code: str) -> int:
    """How deeply brackets nest; unclosed ones count too (LibCST nests them all the same).

    The running depth is summed in C over the brackets alone; only code with a
    closing bracket that nothing opened (the depth would go below zero, where
    the count restarts from zero) is walked run by run.
    """
    depths = list(itertools.accumulate(map(_BRACKET_STEP.__getitem__, _NOT_BRACKETS.sub("", code))))
    if not depths:
        return 0
    if min(depths) >= 0:
        return max(depths)
    depth = deepest = 0
    for run in _BRACKET_RUNS.finditer(code):
        if run.lastgroup == "open":
            depth += len(run.group())
            deepest = max(deepest, depth)
        else:
            depth = max(depth - len(run.group()), 0)
    return deepest


def _longest_chain(code: str) -> int:
    """The most operators and trailers chained in one expression (see ``_chain_in``).

    Only a stretch without commas and semicolons can hold a long chain; only
    one with more links than the limit in all is scanned token by token.
    """
    longest = 0
    for stretch in _LONG_STRETCH.finditer(code):
        links = _LINKS.finditer(code, stretch.start(), stretch.end())
        if next(itertools.islice(links, MAX_CHAIN, None), None) is not None:  # over MAX_CHAIN
            longest = max(longest, _chain_in(stretch.group()))
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
