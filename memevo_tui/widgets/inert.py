"""The last line of defence on the way to the terminal: drawn text made inert.

Every widget already shows a control, bidi or invisible character of the store or a
session file visibly (``␛``, ``‹U+202E›``); whatever one still lets through is dropped
from the drawn line before it is written, so no text can become an escape sequence, a
bidi override or a bell on the terminal (or in a browser tab's terminal).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.segment import Segment
from textual.filter import LineFilter

from ..core.text import UNSAFE

if TYPE_CHECKING:
    from textual.color import Color


class InertText(LineFilter):
    """Drops every control, bidi and invisible character from the text of a drawn line
    (they take no cell, so the line keeps its width); Textual's own escape sequences
    are not text, and pass."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if all(text.isprintable() for text, _, _ in segments):
            return segments
        return [
            seg if seg.text.isprintable() else Segment(UNSAFE.sub("", seg.text), seg.style)
            for seg in segments
        ]
