"""Pasted text made safe: Textual's input parser ends a bracketed paste's text at the
first ESC inside it and turns the rest into key presses, so pasting
``abc<ESC>[31mdef`` into a text box types ``^[31mdef`` first and inserts ``abc`` after
it, and the same paste over a list would run its single-key actions.
``PasteSafeParser`` replaces each ESC inside a paste with the visible ``␛`` before
Textual parses it: the pasted text arrives whole, in order, as one paste."""

from __future__ import annotations

from collections.abc import Iterable

from textual.message import Message

from .compat.textual import XTermParser

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
ESC_SHOWN = "␛"


def _partial_end(text: str) -> int:
    """How many characters at the end of ``text`` could begin ``PASTE_END``."""
    for size in range(min(len(text), len(PASTE_END) - 1), 0, -1):
        if PASTE_END.startswith(text[-size:]):
            return size
    return 0


class PasteSafeParser(XTermParser):
    """Textual's parser, fed pastes without ESC inside them."""

    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        self._in_paste = False
        self._held = ""  # the start of a paste's end marker, split across reads

    def feed(self, data: str) -> Iterable[Message]:
        return super().feed(self.guard(data))

    def guard(self, data: str) -> str:
        """``data`` with every ESC inside a bracketed paste shown as ``␛``."""
        data, self._held = self._held + data, ""
        out: list[str] = []
        i = 0
        while i < len(data):
            if not self._in_paste:
                start = data.find(PASTE_START, i)
                if start < 0:
                    out.append(data[i:])
                    break
                out.append(data[i : start + len(PASTE_START)])
                i = start + len(PASTE_START)
                self._in_paste = True
                continue
            end = data.find(PASTE_END, i)
            if end < 0:
                keep = _partial_end(data[i:])
                out.append(data[i : len(data) - keep].replace("\x1b", ESC_SHOWN))
                self._held = data[len(data) - keep :]
                break
            out.append(data[i:end].replace("\x1b", ESC_SHOWN) + PASTE_END)
            i = end + len(PASTE_END)
            self._in_paste = False
        return "".join(out)
