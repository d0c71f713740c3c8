"""Where a verb's lines go, and how wide they may be."""

from __future__ import annotations

import shutil
import sys
from typing import TextIO

from ..core.text import one_line, plain_lines, safe_json


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Output:
    """stdout for records, stderr for counts and notes.

    On a terminal, ``fit`` clips text to the width; piped, nothing is clipped.
    """

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.tty = _isatty(self.out)
        self.width: int | None = shutil.get_terminal_size((120, 24)).columns if self.tty else None

    def line(self, text: str = "") -> None:
        """A line of output. Whatever it quotes (store text, a session file's ids and
        paths), no control, bidi or invisible character reaches the terminal: each is
        shown visibly, here, whatever the caller did."""
        self.out.write(plain_lines(text) + "\n")

    def styled(self, pieces: list[tuple[str, str]]) -> None:
        """A line of ``(text, sgr)`` pieces: each text made visible as ``line`` makes it,
        then wrapped in its own SGR (``"1"``: bold) on a terminal only. The one way an
        escape sequence reaches stdout, and it is always the program's own."""
        out = []
        for text, sgr in pieces:
            shown = plain_lines(text)
            out.append(f"\x1b[{sgr}m{shown}\x1b[0m" if sgr and self.tty else shown)
        self.out.write("".join(out) + "\n")

    def note(self, text: str) -> None:
        """A count, footer or hint: for the person, not for the pipe (made visible)."""
        self.err.write(plain_lines(text) + "\n")

    def json(self, value: object) -> None:
        self.out.write(safe_json(value) + "\n")

    def fit(self, text: str, used: int = 0) -> str:
        """``text`` on one visible line; on a terminal, clipped to what is left of it."""
        if self.width is None:
            return one_line(text)
        return one_line(text, max(20, self.width - used - 1))

    def row(self, cells: list[str], widths: list[int], last: str) -> None:
        """A table row: aligned columns on a terminal, tab-separated when piped."""
        if self.width is None:
            self.line("\t".join([*(one_line(c) for c in cells), one_line(last)]))
            return
        head = " ".join(f"{one_line(c):<{w}}" for c, w in zip(cells, widths, strict=True))
        self.line(f"{head} {self.fit(last, len(head) + 1)}")
