"""IPython syntax in a cell made inert Python with the same lines and columns.

``%matplotlib inline``, ``!pip install ...``, ``files = !ls``, ``model?`` and
cell magics are not Python: LibCST cannot parse them, and the analysis must
not guess what they do. Each such line becomes ``pass`` at its indentation
(an assignment keeps its target and gets ``...``), so every other line keeps
its number and columns and findings map back to the cell unchanged;
``%time <statement>`` keeps the statement. A cell magic whose body is
Python (``%%time``, ``%%capture``) keeps its body; any other (``%%bash``,
``%%writefile``) makes the whole cell blank, since its body does not run as
the notebook's Python. So do the lines that continue a magic (after a ``\\``).
"""

from __future__ import annotations

import re

PYTHON_BODY_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_CELL_MAGIC = re.compile(r"\s*%%(?P<name>\w+)")
_MAGIC_START = r"(?:!(?!=)|%%?[A-Za-z]|\?+[\w.])"  # not `!=` nor a `% b` continued
_LINE_MAGIC = re.compile(r"\s*" + _MAGIC_START)
_ASSIGNED_MAGIC = re.compile(r"(?P<target>\s*[\w.]+(?:\s*,\s*[\w.]+)*\s*=\s*)" + _MAGIC_START)
_HELP = re.compile(r"(?P<indent>\s*)[\w.\[\]*]+\?\??\s*$")  # `torch.*Tensor?` searches
_TIMED_STATEMENT = re.compile(r"%time\s+(?P<statement>\S.*)")
_COMPOUND = re.compile(r"(?:for|while|if|with|def|class|try|async)\b")


def neutralise(source: str) -> str:
    """``source`` with IPython lines made inert; as many lines, each ending as before."""
    lines = _LINE_BREAK.split(source)
    endings = [match.group() for match in _LINE_BREAK.finditer(source)] + [""]
    cell_magic = _CELL_MAGIC.match(lines[0]) if lines else None
    if cell_magic is not None and cell_magic.group("name") not in PYTHON_BODY_CELL_MAGICS:
        return "".join(end for end in endings)  # every line blank
    kept: list[str] = []
    continued = False
    for index, line in enumerate(lines):
        if continued:
            kept.append("")  # the rest of a magic's line
        elif index == 0 and cell_magic is not None:
            kept.append(_inert(line))
        else:
            kept.append(_neutral_line(line))
        continued = kept[-1] != line and line.rstrip().endswith("\\")
    return "".join(line + end for line, end in zip(kept, endings, strict=True))


def _neutral_line(line: str) -> str:
    timed = _TIMED_STATEMENT.match(line)
    if timed is not None and not _COMPOUND.match(timed.group("statement")):
        prefix = line[: timed.start("statement")]
        return "if 1:".ljust(len(prefix)) + timed.group("statement")  # same columns
    assigned = _ASSIGNED_MAGIC.match(line)
    if assigned is not None:
        return assigned.group("target") + "..."
    if _LINE_MAGIC.match(line) or (_HELP.match(line) and not line.lstrip().startswith("#")):
        return _inert(line)
    return line


def _inert(line: str) -> str:
    """``pass`` at the line's indentation: valid wherever a statement may stand."""
    if not line.strip():
        return line
    indent = line[: len(line) - len(line.lstrip())]
    return indent + "pass"
