"""What every dialog shares: it fits the screen, however small. Its one growing part
(the widget with class ``-body``: a list, a preview, an editor) gets the rows the
screen leaves, so the summary and the buttons around it always stay in view."""

from __future__ import annotations

from typing import TypeVar

from textual import events
from textual.screen import ModalScreen
from textual.widget import Widget

R = TypeVar("R")

SHARE = 0.9
"""How much of the screen's height a dialog may take (``max-height: 90%`` in the styles)."""


class Dialog(ModalScreen[R]):
    """A modal screen whose box holds at most one ``.-body`` child."""

    def on_mount(self) -> None:
        self.call_after_refresh(self.fit)

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self.fit)

    def fit(self) -> None:
        """Give the body what the screen leaves once the rest of the dialog is drawn."""
        body = next(iter(self.query(".-body")), None)
        box = body.parent if body is not None else None
        if body is None or not isinstance(box, Widget):
            return
        room = int(self.size.height * SHARE) - box.styles.gutter.height
        for child in box.children:
            if child is not body and child.display:
                room -= _rows(child)
        room -= body.styles.margin.top + body.styles.margin.bottom
        body.styles.max_height = max(3, room)


def _rows(widget: Widget) -> int:
    """The rows ``widget`` takes in a vertical box, margins included."""
    margin = widget.styles.margin
    return widget.outer_size.height + margin.top + margin.bottom
