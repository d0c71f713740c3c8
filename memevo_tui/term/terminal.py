"""The terminal the dashboard runs in: pasted text made safe; the driver to run it with.

Textual's input parser ends a bracketed paste's text at the first ESC inside
it and turns the rest into key presses, so pasting ``abc<ESC>[31mdef`` into a
text box types ``^[31mdef`` first and inserts ``abc`` after it, and the same
paste over a list would run its single-key actions. ``PasteSafeParser``
replaces each ESC inside a paste with the visible ``␛`` before Textual parses
it: the pasted text arrives whole, in order, as one paste.

In a terminal the dashboard runs on ``guarded.GuardedDriver`` (Linux and macOS),
which also ends the process when the terminal goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from textual import constants
from textual.message import Message

from .compat.textual import XTermParser, driver_of

if TYPE_CHECKING:
    from textual.app import App
    from textual.driver import Driver

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


def driver() -> type[Driver] | None:
    """The driver to run the dashboard in a terminal with: ``GuardedDriver`` where
    Textual would use its Linux driver (Linux and macOS), else Textual's own choice."""
    if constants.DRIVER is not None or sys.platform == "win32":
        return None
    from .guarded import GuardedDriver, install

    install()
    return GuardedDriver


def leave_on_signals(app: App[Any]) -> None:
    """SIGTERM ends ``app`` as q does, so the terminal is restored; so does SIGHUP sent
    to a live terminal, while on a terminal that hung up the driver ends the process
    without writing to it (``guarded.GuardedDriver``). Exit code: 128 + the signal."""
    loop = asyncio.get_running_loop()

    def taken(sig: int) -> None:
        hang_up = getattr(driver_of(app), "hang_up", None)
        if sig == getattr(signal, "SIGHUP", None) and hang_up is not None:
            hang_up()
        else:
            app.exit(return_code=128 + sig)

    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            with contextlib.suppress(NotImplementedError):  # Windows: no such handlers
                loop.add_signal_handler(sig, taken, sig)
