"""The status line: the figures of the views, then whether live updates run, then help."""

from __future__ import annotations

from textual.widgets import Static

from store._js import iso


class StatusLine(Static):
    """One line of plain text; never markup."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)

    def show(
        self, parts: list[str], *, live: bool, last_change: float | None, problem: str = ""
    ) -> None:
        if problem:  # live updates cannot be trusted while the store fails
            parts = [*parts, f"✗ store error: {problem} (ctrl+r retries)"]
        elif live:
            last = iso(last_change)[11:19] if last_change else "none yet"
            parts = [*parts, f"● live (last change {last})"]
        else:
            parts = [*parts, "‖ paused (space)"]
        self.update(" · ".join([*parts, "? help"]))
