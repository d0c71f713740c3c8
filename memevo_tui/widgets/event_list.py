"""The event history: every change to every memory, newest first."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message

from store import CorruptRow, Event

from ..text import one_line
from ..view import origin_name
from .virtual_list import Column, VirtualList

EventRow = Event | CorruptRow


def event_cells(row: EventRow) -> dict[str, str]:
    if isinstance(row, CorruptRow):
        return {"actor": "corrupt", "reason": f"{one_line(row.id)}: {row.reason}"}
    return {
        "time": row.at[:16].replace("T", " "),
        "actor": row.actor,
        "origin": one_line(origin_name(row.scope)),
        "changes": f"×{len(row.after)}" if row.after else "–",
        "reason": one_line(row.reason),
    }


class EventList(VirtualList[EventRow]):
    """Events newest first; more are fetched as the cursor nears the end."""

    COLUMNS = (
        Column("time", "TIME (UTC)", 16),
        Column("actor", "ACTOR", 9),
        Column("origin", "ORIGIN", 12),
        Column("changes", "REC", 3),
        Column("reason", "REASON", 0),
    )
    DROP_ORDER = ("origin", "changes", "actor")
    CLASS_PREFIX = "event-list"
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "event-list--header",
        "event-list--cursor",
        "event-list--empty",
        "event-list--manual",
        "event-list--model",
        "event-list--local",
        "event-list--migration",
        "event-list--corrupt",
        "event-list--empty-event",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("u", "undo", "Undo event", id="history.undo", tooltip="Undo the selected event"),
    ]

    class Highlighted(VirtualList.Highlighted):
        """The highlighted event changed."""

    class UndoRequested(Message):
        def __init__(self, event_list: EventList, row: EventRow | None) -> None:
            super().__init__()
            self.event_list = event_list
            self.row = row

        @property
        def control(self) -> EventList:
            return self.event_list

    class MoreWanted(Message):
        """The cursor is near the last loaded event."""

        def __init__(self, event_list: EventList, before_rowid: int) -> None:
            super().__init__()
            self.event_list = event_list
            self.before_rowid = before_rowid

        @property
        def control(self) -> EventList:
            return self.event_list

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.exhausted = False
        self.empty_text = "No events."

    def row_key(self, row: EventRow) -> str:
        return row.id

    def cells(self, row: EventRow) -> dict[str, str]:
        return event_cells(row)

    def row_class(self, row: EventRow) -> str | None:
        if isinstance(row, CorruptRow):
            return "corrupt"
        return None if row.after else "empty-event"

    def cell_class(self, row: EventRow, column: str) -> str | None:
        if column == "actor" and isinstance(row, Event):
            return row.actor
        return None

    def make_highlighted(self, row: EventRow | None) -> EventList.Highlighted:
        return self.Highlighted(self, row)

    def watch_cursor(self, old: int, new: int) -> None:
        super().watch_cursor(old, new)
        if not self.exhausted and self.rows and new >= len(self.rows) - 20:
            last = self.rows[-1]
            rowid = last.rowid if isinstance(last, Event) else None
            if rowid is not None:
                self.post_message(self.MoreWanted(self, rowid))

    def action_undo(self) -> None:
        self.post_message(self.UndoRequested(self, self.highlighted))
