"""Making untrusted memory text safe to show on a terminal.

Memory content, origins, source ids and event reasons are user and model
output. Nothing from the store is ever interpreted as markup, and no control
character reaches the terminal: each is replaced by a visible stand-in.
"""

from __future__ import annotations

import re
import unicodedata

from store._js import iso, parse_ms

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


MAX_MARKS = 2


def calm_marks(text: str, limit: int = MAX_MARKS) -> str:
    """At most ``limit`` combining marks per character, so stacked marks stay on their line."""
    if text.isascii():
        return text
    out: list[str] = []
    run = 0
    for ch in text:
        if unicodedata.combining(ch):
            run += 1
            if run > limit:
                continue
        else:
            run = 0
        out.append(ch)
    return "".join(out)


def one_line(text: str, width: int | None = None) -> str:
    """A single visible line, clipped to ``width`` characters with an ellipsis."""
    line = calm_marks(visible(text))
    if width is not None and len(line) > width:
        return line[: max(0, width - 1)] + "…"
    return line


def iso_day(value: str | None) -> str:
    """``YYYY-MM-DD`` (UTC) of a stored timestamp, or ``""`` when it does not parse."""
    ms = parse_ms(value)
    return iso(ms)[:10] if ms is not None else ""
