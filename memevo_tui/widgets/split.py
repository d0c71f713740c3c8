"""A list beside its detail pane: ``z`` hides or shows the pane, ``<`` and ``>`` move the split.

Below ``NARROW`` columns the pane stacks under the list and starts hidden, so a
small terminal gives the list its rows; ``z`` brings the pane back.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widget import Widget


class Split(Horizontal):
    """Two children: a list (first) and its detail pane (last)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "z",
            "toggle_side",
            "Detail",
            id="split.toggle",
            tooltip="Hide or show the detail pane (the list takes the whole width)",
        ),
        Binding(
            "less_than_sign",
            "resize(5)",
            "Wider pane",
            id="split.wider",
            show=False,
            key_display="<",
            tooltip="Move the split left: a wider detail pane",
        ),
        Binding(
            "greater_than_sign",
            "resize(-5)",
            "Narrower pane",
            id="split.narrower",
            show=False,
            key_display=">",
            tooltip="Move the split right: a wider list",
        ),
    ]

    MIN, MAX = 20, 70
    """The detail pane's width, in percent of the split, when side by side."""

    def __init__(self, *, width: int, id: str | None = None) -> None:
        super().__init__(id=id, classes="split")
        self.side_width = width
        self.side_wanted: bool | None = None
        """The user's choice (z); None: shown when side by side, hidden when stacked."""

    @property
    def side(self) -> Widget:
        return self.children[-1]

    @property
    def narrow(self) -> bool:
        return self.has_class("-narrow")

    def on_mount(self) -> None:
        self._show_side()

    def set_narrow(self, narrow: bool) -> None:
        self.set_class(narrow, "-narrow")
        self._show_side()

    def _show_side(self) -> None:
        shown = (not self.narrow) if self.side_wanted is None else self.side_wanted
        side = self.side
        if not shown and side.has_focus_within:
            self.screen.set_focus(self.children[0])
        side.display = shown
        side.styles.width = None if self.narrow else f"{self.side_width}%"  # stacked: CSS

    def action_toggle_side(self) -> None:
        self.side_wanted = not self.side.display
        self._show_side()

    def action_resize(self, delta: int) -> None:
        if self.narrow or not self.side.display:
            self.side_wanted = True
            self._show_side()
            return
        self.side_width = max(self.MIN, min(self.MAX, self.side_width + delta))
        self._show_side()
