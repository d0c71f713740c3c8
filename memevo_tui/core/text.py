"""Making untrusted memory text safe to show on a terminal.

Memory content, origins, source ids and event reasons are user and model
output. Nothing from the store is ever interpreted as markup, and no control,
bidi or invisible character reaches the terminal: each is replaced by a visible
stand-in (``␛``, ``‹U+202E›``, ``‹U+200B›``), so "pay‹U+200B›ment" never passes
for "payment".
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from store import Evidence, Signal, iso, parse_ms

INVISIBLE = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
"""A regex class of what draws nothing or reorders text: every format character
(Unicode Cf: bidi controls, zero-width spaces and joiners, the BOM, tags), the line
and paragraph separators, and the Hangul fillers."""
UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{INVISIBLE}\ud800-\udfff]")
"""Control characters (C0, DEL, C1), the invisible ones, and lone surrogates (a
JavaScript string may hold one; no terminal can show it, and UTF-8 cannot say it)."""


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
    """``text`` with every control, bidi and invisible character shown visibly."""
    if text.isprintable():
        return text
    return UNSAFE.sub(lambda m: _stand_in(m.group(0), keep_newlines=keep_newlines), text)


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
    """A single visible line, clipped to ``width`` characters with an ellipsis. Only
    what can be shown is looked at: a 50 MB text costs what its first line does."""
    if width is not None and len(text) > (room := (width + 1) * (MAX_MARKS + 1)):
        text = text[:room]
    line = calm_marks(visible(text))
    if width is not None and len(line) > width:
        return line[: max(0, width - 1)] + "…"
    return line


def plain_lines(text: str) -> str:
    """``text`` shown visibly, keeping its line breaks and tabs (a notice, a dialog)."""
    return calm_marks(visible(text, keep_newlines=True))


def short_ids(ids: Iterable[str], least: int = 8) -> dict[str, str]:
    """Each id's shortest prefix that no other of ``ids`` shares, ``least`` characters
    at least, as git abbreviates: UUIDv7 session ids started in the same minute share
    their first 8 hex digits, and are told apart."""
    ordered = sorted(set(ids))
    out: dict[str, str] = {}
    for i, this in enumerate(ordered):
        need = least
        for other in (ordered[i - 1] if i else None,
                      ordered[i + 1] if i + 1 < len(ordered) else None):  # fmt: skip
            if other is not None:
                same = 0
                for a, b in zip(this, other, strict=False):
                    if a != b:
                        break
                    same += 1
                need = max(need, same + 1)
        out[this] = this[:need]
    return out


SHOWN_CHARS = 16_000
"""The most of one text a pane lays out at once (a page of the pager)."""
SHOWN_LINES = 200


def megabytes(size: int) -> str:
    """A byte count in words: "812 bytes", "4.0 KB", "49.9 MB"."""
    if size < 1024:
        return f"{size} bytes"
    if size < 1 << 20:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1 << 20):.1f} MB"


def capped(text: str, chars: int = SHOWN_CHARS, lines: int = SHOWN_LINES) -> tuple[str, str]:
    """The start of ``text`` a pane can lay out at once (at most ``chars`` characters
    and ``lines`` lines), and what is left in words ("… 49.9 MB more"; "" for nothing)."""
    head = text[:chars]
    cut = -1
    for _ in range(lines):
        cut = head.find("\n", cut + 1)
        if cut < 0:
            break
    if cut >= 0:
        head = head[:cut]
    if len(head) == len(text):
        return text, ""
    rest = len(text[len(head) :].encode("utf-8", "surrogatepass"))
    return head, f"… {megabytes(rest)} more"


def iso_day(value: str | None) -> str:
    """``YYYY-MM-DD`` (UTC) of a stored timestamp, or ``""`` when it does not parse."""
    ms = parse_ms(value)
    return iso(ms)[:10] if ms is not None else ""


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if code > 0xFFFF:  # JSON spells an astral character as its UTF-16 surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def safe_json(value: object) -> str:
    """JSON, lossless and valid, with every control, bidi and invisible character
    escaped as ``\\uXXXX``: a terminal or a log viewer shows the escape, never obeys it."""
    return UNSAFE.sub(_json_escape, json.dumps(value, ensure_ascii=False))


def field_text(value: Any) -> str:
    """A record field's value in a few words, for a diff: a feedback signal's verdict,
    a list's items (or its length), else the value; made safe to show."""
    if isinstance(value, Signal):
        return value.verdict
    if isinstance(value, Evidence):
        return one_line(f"{value.basis}/{value.method} from {value.source_id}")
    if value is None:
        return "-"
    if isinstance(value, tuple):
        if value and isinstance(value[0], str):
            return one_line(", ".join(value))
        return str(len(value))
    return one_line(str(value))


def no_match(noun: str, typed: str, total: int, of: str, where: str = "") -> str:
    """A list's empty state under a filter, saying what is true: ``No event matches
    'redis' (412 events; esc clears the filter).`` (``where``: " in webshop")."""
    return f"No {noun} matches '{one_line(typed, 60)}' ({total} {of}{where}; esc clears it)."
