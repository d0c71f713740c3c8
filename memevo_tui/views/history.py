"""The History view: every event, newest first, and what the selected one changed.

Undoing an event (``u``) is a write: the Memories view runs it, through the App.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message

from store import CorruptRow, Event, StoreError
from store.curation import UndoPlan

from ..messages import StoreFailed, UndoRequested
from ..state import Change, DashboardState, EventRow, LiveChanged, OwnWrite, Reloaded
from ..text import one_line
from ..widgets.event_diff import EventDiff
from ..widgets.event_list import EventList
from .base import BaseView

PAGE = 200
"""Events read at a time; more are read as the cursor nears the end."""


class HistoryView(BaseView):
    """The event list beside the selected event's diff and its undo preview."""

    FOCUS = "#event-list"
    SETTLE = 0.05
    """Seconds the cursor must rest before the undo preview is computed."""

    @dataclass
    class EventsLoaded(Message):
        """A page of the event history."""

        rows: Sequence[EventRow]
        append: bool
        exhausted: bool

    @dataclass
    class UndoPreviewed(Message):
        """What undoing an event would write, or upstream's reason for refusing."""

        event_id: str
        plan: UndoPlan | str

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(state, id=id)
        self.stale = True
        """The list is out of date: read it again when the view is next shown."""
        self._previewed: str | None = None  # the event whose undo preview is shown

    def compose(self) -> ComposeResult:
        with Horizontal(id="history-main", classes="split"):
            yield EventList(id="event-list")
            yield EventDiff(id="event-diff")

    def activated(self) -> None:
        if self.stale:
            self.load_events()

    def state_changed(self, change: Change) -> None:
        if isinstance(change, OwnWrite | Reloaded):
            self.stale = True
            if self.active:
                self.load_events()
        elif isinstance(change, LiveChanged) and change.events and not self.stale:
            event_list = self.query_one(EventList)
            known = {e.id for e in event_list.rows}
            fresh = [e for e in change.events if e.id not in known]
            event_list.set_rows([*fresh, *event_list.rows])
            event_list.flash({e.id for e in fresh})

    @property
    def busy(self) -> bool:
        event_list = self.query_one(EventList)
        row = event_list.highlighted
        behind = self.query_one(EventDiff).shown is not row
        wants_preview = isinstance(row, Event) and bool(row.after) and self._previewed != row.id
        return super().busy or behind or wants_preview

    # ------------------------------------------------------------ the list

    @work(exclusive=True, group="events", exit_on_error=False)
    async def load_events(self, before_rowid: int | None = None) -> None:
        try:
            store = await self.state.open()
            rows = await store.events(limit=PAGE, before_rowid=before_rowid)
        except StoreError as exc:
            self.post_message(StoreFailed(exc))
            return
        self.post_message(
            self.EventsLoaded(rows, append=before_rowid is not None, exhausted=len(rows) < PAGE)
        )

    def on_history_view_events_loaded(self, message: EventsLoaded) -> None:
        event_list = self.query_one(EventList)
        rows = [*event_list.rows, *message.rows] if message.append else list(message.rows)
        event_list.exhausted = message.exhausted
        event_list.set_rows(rows)
        if not message.append:
            self.stale = False

    def on_event_list_more_wanted(self, message: EventList.MoreWanted) -> None:
        self.load_events(message.before_rowid)

    # ------------------------------------------------------------ the diff and undo

    def on_event_list_highlighted(self, message: EventList.Highlighted) -> None:
        self.query_one(EventDiff).show(message.row)
        if isinstance(message.row, Event) and message.row.after:
            self.preview_undo(message.row.id)

    @work(exclusive=True, group="undo-preview", exit_on_error=False)
    async def preview_undo(self, event_id: str) -> None:
        await asyncio.sleep(self.SETTLE)  # let fast cursor movement settle first
        store = self.state.store
        if store is None:
            return
        try:
            plan: UndoPlan | str = await store.undo_preview(event_id)
        except StoreError as exc:  # upstream's refusal, or why the store could not tell
            plan = str(exc)
        self.post_message(self.UndoPreviewed(event_id, plan))

    def on_history_view_undo_previewed(self, message: UndoPreviewed) -> None:
        current = self.query_one(EventList).highlighted
        if current is not None and current.id == message.event_id:
            self._previewed = message.event_id
            self.query_one(EventDiff).show_undo(message.plan)

    def on_event_list_undo_requested(self, message: EventList.UndoRequested) -> None:
        row = message.row
        if row is None or isinstance(row, CorruptRow):
            self.notify("Select a valid event to undo", severity="warning")
            return
        self.post_message(UndoRequested(row.id, f"event {row.id} ({one_line(row.reason, 60)})"))
