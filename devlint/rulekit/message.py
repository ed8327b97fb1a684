"""A finding's message: its text, and the places in other files that text names.

Those places are the finding's related locations (SARIF's ``relatedLocations``, JSON's
``related``, the editor's hover). They travel with the words that name them: ``place``
names a line and cites it in one value, and joining messages joins what they cite, so a
message cannot name another file's line without citing it.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from devlint.core.events import Facts
from devlint.core.positions import NotInModule
from devlint.diagnostic import RelatedPlace


@dataclass(frozen=True)
class Message:
    """Message text and the places in other files it names, each once, in the order named.

    Join with ``+`` (a ``str`` on either side is text that cites nothing). Put in an
    f-string, it raises: the text would go on without the places it cites.
    """

    text: str
    cites: tuple[RelatedPlace, ...] = ()

    def __add__(self, other: Message | str) -> Message:
        if isinstance(other, str):
            return Message(self.text + other, self.cites)
        return Message(self.text + other.text, tuple(dict.fromkeys(self.cites + other.cites)))

    def __radd__(self, other: str) -> Message:
        return Message(other + self.text, self.cites)

    def __format__(self, spec: str) -> str:
        raise TypeError("a Message in an f-string loses the places it cites: join it with +")


def place(facts: Facts, node: cst.CSTNode) -> Message:
    """Where ``node`` is: ``line 8`` (``line 4 of cell 2``) in this file; ``model.py:41`` in
    another file of the project, citing that line."""
    try:
        return Message(facts.layout.line_name(facts.line_of(node)))
    except NotInModule:
        pass
    for scope in facts.imported:
        line = scope.line_of(node)
        if line is not None:
            return Message(f"{scope.name}:{line}", (RelatedPlace(scope.path, line),))
    return Message("another file")
