"""The event history: every change to every memory, newest first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message

from store import CorruptRow, Event, js_json

from ..core.appstate import Batch
from ..core.glyphs import KIND_CODES
from ..core.text import one_line
from ..core.view import origin_name
from .memory_list import PROVENANCE_BINDING
from .messages import ShowProvenance, ShowRecord
from .virtual_list import Column, VirtualList

EventRow = Event | CorruptRow


@dataclass(frozen=True, slots=True, eq=False)
class BatchRow:
    """One bulk action in the history: its events as one entry (enter expands it)."""

    batch: Batch
    events: tuple[Event, ...]

    @property
    def id(self) -> str:
        return f"batch:{self.batch.id}"


HistoryRow = Event | CorruptRow | BatchRow


def verb(e: Event) -> str:
    """What the event did, in one or two words, from its actor and reason (§2.5)."""
    reason = e.reason
    if e.actor == "local":
        return "capture"
    if e.actor == "migration":
        return "import"
    if e.actor == "model":
        return "learn"
    if reason.startswith("Feedback "):
        return reason.removeprefix("Feedback ").partition(":")[0]
    if reason.startswith("Undo "):
        return "undo"
    return reason.split(" ", 1)[0][:12] or "?"


def event_text(e: Event) -> str:
    """The record it changed, as the log reads it: its text, and how many more."""
    if not e.after:
        return "(no record changed)" if e.actor != "local" else "(nothing extracted)"
    first = e.after[0]
    text = first.get("content")
    line = one_line(text) if isinstance(text, str) else one_line(str(first.get("id", "?")))
    if e.actor == "model" and e.before and e.before[0] is None:
        line = "new: " + line
    more = len(e.after) - 1
    return f"{line}  (+{more} more)" if more else line


def batch_cells(row: BatchRow) -> dict[str, str]:
    records = [e.after[0] for e in row.events if e.after]
    kinds = {r.get("kind") for r in records}
    origins = {origin_name(e.scope) for e in row.events}
    first = row.events[-1] if row.events else None
    text = event_text(first) if first is not None else ""
    cut = f", cut short at {len(row.events)} of {row.batch.planned}" if row.batch.cut_short else ""
    return {
        "time": row.batch.at[:16].replace("T", " "),
        "actor": "manual",
        "verb": one_line(f"{row.batch.verb} ×{len(row.events)}"),
        "kind": KIND_CODES.get(str(kinds.pop()), "") if len(kinds) == 1 else "*",
        "origin": one_line(origins.pop()) if len(origins) == 1 else "several",
        "text": f"⊞ one bulk action{cut}: {text.split('  (+')[0]} and {len(row.events) - 1} more",
    }


def event_cells(row: HistoryRow) -> dict[str, str]:
    if isinstance(row, BatchRow):
        return batch_cells(row)
    if isinstance(row, CorruptRow):
        return {"verb": "corrupt", "text": f"{one_line(row.id)}: {row.reason}"}
    first = row.after[0] if row.after else {}
    kind = first.get("kind")
    return {
        "time": row.at[:16].replace("T", " "),
        "actor": row.actor,
        "verb": one_line(verb(row)),
        "kind": KIND_CODES.get(kind, "") if isinstance(kind, str) else "",
        "origin": one_line(origin_name(row.scope)),
        "text": event_text(row),
    }


class EventList(VirtualList[HistoryRow]):
    """Events newest first; more are fetched as the cursor nears the end. The events of
    one bulk action show as one entry, which ``enter`` expands."""

    WRITES = frozenset({"undo"})
    COLUMNS = (
        Column("time", "TIME (UTC)", 16),
        Column("actor", "ACTOR", 7),
        Column("verb", "DID", 10),
        Column("kind", "K", 1),
        Column("origin", "ORIGIN", 8),
        Column("text", "RECORD", 0),
    )
    DROP_ORDER = ("kind", "origin", "actor")
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
        "event-list--batch",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("u", "undo", "Undo", id="history.undo", tooltip="Undo the selected event"),
        Binding(
            "enter",
            "open",
            "Record",
            id="history.open",
            tooltip="Show the event's record in the memory list; expand a bulk action",
        ),
        PROVENANCE_BINDING,
    ]

    class Highlighted(VirtualList.Highlighted):
        """The highlighted event changed."""

    class UndoRequested(Message):
        def __init__(self, event_list: EventList, row: HistoryRow | None) -> None:
            super().__init__()
            self.event_list = event_list
            self.row = row

        @property
        def control(self) -> EventList:
            return self.event_list

    class BatchToggled(Message):
        """Expand or fold the events of a bulk action."""

        def __init__(self, event_list: EventList, row: BatchRow) -> None:
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
        self.members: frozenset[str] = frozenset()
        """Events shown under their expanded bulk action (drawn indented)."""

    def row_key(self, row: HistoryRow) -> str:
        return row.id

    def cells(self, row: HistoryRow) -> dict[str, str]:
        cells = event_cells(row)
        if row.id in self.members:
            cells["text"] = "└ " + cells.get("text", "")
        return cells

    def row_class(self, row: HistoryRow) -> str | None:
        if isinstance(row, BatchRow):
            return "batch"
        if isinstance(row, CorruptRow):
            return "corrupt"
        return None if row.after else "empty-event"

    def cell_class(self, row: HistoryRow, column: str) -> str | None:
        if column == "actor" and isinstance(row, Event):
            return row.actor
        return None

    def make_highlighted(self, row: HistoryRow | None) -> EventList.Highlighted:
        return self.Highlighted(self, row)

    def yank_text(self, row: HistoryRow, long: bool) -> tuple[str, str] | None:
        if isinstance(row, BatchRow):
            return "\n".join(row.batch.events), "the ids of its events"
        if isinstance(row, CorruptRow):
            return (row.raw, "the corrupt event as stored") if long else (row.id, "its id")
        return (js_json(row.data), "the event as stored") if long else (row.id, "its id")

    def watch_cursor(self, old: int, new: int) -> None:
        super().watch_cursor(old, new)
        if not self.exhausted and self.rows and new >= len(self.rows) - 20:
            last = self.rows[-1]
            rowid = last.rowid if isinstance(last, Event) else None
            if rowid is not None:
                self.post_message(self.MoreWanted(self, rowid))

    def action_open(self) -> None:
        row = self.highlighted
        if isinstance(row, BatchRow):
            self.post_message(self.BatchToggled(self, row))
        elif isinstance(row, Event) and row.record_ids:
            self.post_message(ShowRecord(row.record_ids[0], "h returns to the history"))
        else:
            self.notify("This event changed no record", severity="warning")

    def action_provenance(self) -> None:
        """Where the event's (first) record came from."""
        row = self.highlighted
        if isinstance(row, Event) and row.record_ids:
            self.post_message(ShowProvenance(row.record_ids[0]))
        else:
            self.notify("No record to show: select an event", severity="warning")

    def action_undo(self) -> None:
        self.post_message(self.UndoRequested(self, self.highlighted))
