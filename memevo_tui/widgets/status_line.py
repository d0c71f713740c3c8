"""The status line: the active view's figures on the left, the live indicator on the right.

The right part keeps its place: when the line is too narrow, the view's figures
are cut (with …), never the indicator; on a very narrow line the indicator (and
the time dial's banner) take their short forms.
"""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size
from rich.text import Text
from textual.widget import Widget

from store import iso

from ..core.text import one_line


class StatusLine(Widget):
    """One line of plain text; never markup."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.left = ""
        self.indicator = ("", "")  # the long and the short form
        self.banner = ("", "")

    def show(
        self,
        parts: list[str],
        *,
        live: bool,
        last_change: float | None,
        problem: str = "",
        as_of: float | None = None,
        replayed: bool = False,
    ) -> None:
        """``replayed``: ``as_of`` is a past moment, the records as they were (from the
        event log); otherwise the records are as now, their decay projected."""
        problem = one_line(problem)  # every part may quote a file, a path, a record
        if problem:  # live updates cannot be trusted while the store fails
            self.indicator = (f"✗ store error: {problem} (ctrl+r retries)", f"✗ {problem}")
        elif live:
            last = iso(last_change)[11:19] if last_change else "none yet"
            self.indicator = (f"● live (last change {last})", "● live")
        else:
            self.indicator = ("‖ paused (ctrl+space)", "‖ paused")
        if as_of is None:
            self.banner = ("", "")
        else:
            when = iso(as_of)[:16].replace("T", " ")
            how = "from the event log" if replayed else "simulated"
            self.banner = (f" as of {when} ({how}; 0: now) ", f" as of {when[:10]} ")
        self.left = one_line(" · ".join(parts))
        self.refresh()

    def _right(self, width: int) -> tuple[str, str]:
        """(banner, indicator · ? help), long when they leave the left part some room."""
        long = (self.banner[0], f"{self.indicator[0]} · ? help")
        if cell_len(long[0] + long[1]) + 24 <= width:
            return long
        return self.banner[1], self.indicator[1]

    def render(self) -> Text:
        width = self.content_region.width or self.size.width
        banner, right = self._right(width)
        room = max(0, width - cell_len(banner) - cell_len(right) - 3)
        left = self.left
        if cell_len(left) > room:
            left = set_cell_size(left, max(0, room - 1)) + "…" if room else ""
        gap = max(1, width - cell_len(left) - cell_len(banner) - cell_len(right) - 1)
        line = Text(no_wrap=True, overflow="crop")
        line.append(f"{left}{' ' * gap}")
        if banner:  # the time dial: never cut, never colour alone (it says "as of")
            line.append(banner, style="reverse bold")
            line.append(" ")
        line.append(right)
        return line

    def __str__(self) -> str:
        return f"{self.left} · {self.banner[0]} {self.indicator[0]}"
