"""What hovering over a finding shows in the editor.

The diagnostic itself carries its message and a link; the hover adds what the
rule is about (its name and summary, as ``devlint rule`` prints them) and makes
the places in other files that the message names (``Diagnostic.related``: where
a value it names was created or moved) links the editor opens at their line.
Places in the same file are in the message as ``line N``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from pygls.uris import from_fs_path

from devlint.diagnostic import Diagnostic, RelatedPlace
from devlint.notices import NOTICE_SUMMARIES
from devlint.rules import rule_by_code

_MARKDOWN_SPECIAL = re.compile(r"([\\*_\[\]<>#|~])")
_CODE_SPAN = re.compile(r"(`[^`]*`)")


def hover_text(findings: Sequence[tuple[Diagnostic, str]], root: str | None, markdown: bool) -> str:
    """The hover of ``findings`` (each with its rule's page), one section each; places
    under ``root`` named from it. Markdown, or plain text for clients without it."""
    separator = "\n\n---\n\n" if markdown else "\n\n"
    return separator.join(_section(d, href, root, markdown) for d, href in findings)


def _section(diagnostic: Diagnostic, href: str, root: str | None, markdown: bool) -> str:
    name, summary = _about(diagnostic.code)
    title = f"{diagnostic.code} {name}".rstrip()
    if markdown:
        lines = [f"**{title}**: {_escaped(summary)} ([rule]({href}))", _escaped(diagnostic.message)]
    else:
        lines = [f"{title}: {summary} ({href})", diagnostic.message]
    if diagnostic.related:
        places = ", ".join(_place(place, root, markdown) for place in diagnostic.related)
        lines.append(f"In other files: {places}")
    return "\n\n".join(lines)


def _about(code: str) -> tuple[str, str]:
    """The rule's name and summary (a sentence); a notice's summary."""
    rule = rule_by_code(code)
    if rule is not None:
        return rule.meta.name, _sentence(rule.meta.summary)
    if code in NOTICE_SUMMARIES:
        return "(notice)", _sentence(NOTICE_SUMMARIES[code])
    return "", ""


def _sentence(text: str) -> str:
    return f"{text[:1].upper()}{text[1:]}."


def _place(place: RelatedPlace, root: str | None, markdown: bool) -> str:
    """``model.py:41``, from ``root`` when it is under it; a link in Markdown."""
    shown = place.path
    if root is not None:
        relative = os.path.relpath(place.path, root)
        if not relative.startswith(os.pardir) and not os.path.isabs(relative):
            shown = relative
    label = f"{shown}:{place.line}"
    if not markdown:
        return label
    uri = from_fs_path(place.path)
    return f"[{_escaped(label)}]({uri}#L{place.line})" if uri else _escaped(label)


def _escaped(text: str) -> str:
    """``text`` with Markdown's special characters escaped, but in its code spans."""
    parts = _CODE_SPAN.split(text)  # a code span at each odd index
    return "".join(
        part if index % 2 else _MARKDOWN_SPECIAL.sub(r"\\\1", part)
        for index, part in enumerate(parts)
    )
