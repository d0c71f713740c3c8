"""Making untrusted memory text safe to show on a terminal.

Memory content, origins, source ids and event reasons are user and model
output. Nothing from the store is ever interpreted as markup, and no control
character reaches the terminal: each is replaced by a visible stand-in.
"""

from __future__ import annotations

import re

_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")


def _stand_in(ch: str, *, keep_newlines: bool) -> str:
    code = ord(ch)
    if ch == "\n":
        return "\n" if keep_newlines else "⏎"
    if ch == "\t":
        return "\t" if keep_newlines else "→"
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode "control pictures" block: ␛ ␇ ␍ ...
    if code == 0x7F:
        return "␡"
    return f"‹U+{code:04X}›"


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control and bidi-override character shown visibly."""
    if text.isprintable():
        return text
    return _CONTROL.sub(lambda m: _stand_in(m.group(0), keep_newlines=keep_newlines), text)


def one_line(text: str, width: int | None = None) -> str:
    """A single visible line, clipped to ``width`` cells with an ellipsis."""
    line = visible(text)
    if width is not None and len(line) > width:
        return line[: max(0, width - 1)] + "…"
    return line
