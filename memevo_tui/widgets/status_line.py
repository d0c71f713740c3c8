"""The status line: the active view's figures on the left, the live indicator on the right.

The right part keeps its place: when the line is too narrow, the view's figures
are cut (with …), never the indicator.
"""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size
from rich.text import Text
from textual.widget import Widget

from store._js import iso


class StatusLine(Widget):
    """One line of plain text; never markup."""

    DEFAULT_CSS = "StatusLine { height: 1; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.left = ""
        self.right = ""

    def show(
        self, parts: list[str], *, live: bool, last_change: float | None, problem: str = ""
    ) -> None:
        if problem:  # live updates cannot be trusted while the store fails
            indicator = f"✗ store error: {problem} (ctrl+r retries)"
        elif live:
            last = iso(last_change)[11:19] if last_change else "none yet"
            indicator = f"● live (last change {last})"
        else:
            indicator = "‖ paused (space)"
        self.left = " · ".join(parts)
        self.right = f"{indicator} · ? help"
        self.refresh()

    def render(self) -> Text:
        width = self.content_region.width or self.size.width
        room = max(0, width - cell_len(self.right) - 3)
        left = self.left
        if cell_len(left) > room:
            left = set_cell_size(left, max(0, room - 1)) + "…" if room else ""
        gap = max(1, width - cell_len(left) - cell_len(self.right))
        return Text(f"{left}{' ' * gap}{self.right}", no_wrap=True, overflow="crop")

    def __str__(self) -> str:
        return f"{self.left} · {self.right}"
