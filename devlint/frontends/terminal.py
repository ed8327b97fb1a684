"""Text safe to print on a terminal, whatever file, cache entry or message it came from.

A file name, a source line or a cached message may hold control characters:
``ESC [ 2 J`` clears the screen, ``ESC ] 8`` makes a fake link, ``CR`` and
backspace overwrite what was printed before, and bidi overrides (U+202E…)
reorder it ("Trojan Source"). ``printable`` shows each of them as a Python
escape (``\\x1b``, ``\\u202e``) instead, so the output shows what is there.
"""

from __future__ import annotations

_BIDI_CONTROLS = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
_CONTROLS = (*range(0x00, 0x20), *range(0x7F, 0xA0), *_BIDI_CONTROLS)
_ESCAPES = {code: ascii(chr(code))[1:-1] for code in _CONTROLS}
_LINE = str.maketrans(_ESCAPES)
_TEXT = str.maketrans({code: text for code, text in _ESCAPES.items() if chr(code) not in "\n\t"})


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` with every control character shown as an escape; newlines and tabs are
    kept unless ``one_line`` (a path or a message that must stay on its own line)."""
    return text.translate(_LINE if one_line else _TEXT)
