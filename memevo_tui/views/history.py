"""The History view: every event, newest first, as a log, and what the selected one changed.

``/`` filters by record text, actor, verb, kind and origin. Undoing an event
(``u``) is a write: the Memories view runs it, through the main screen, as it
shows an event's record (``enter``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message

from store import ACTORS, CorruptRow, Event, StoreError, UndoPlan

from ..core.appstate import Batch
from ..core.filters import Field, Query
from ..core.state import (
    Change,
    DashboardState,
    EventRow,
    LiveChanged,
    OwnWrite,
    Regrouped,
    Reloaded,
    Scoped,
)
from ..core.text import no_match, one_line
from ..core.verbs import LOGGED
from ..core.view import KIND_NAMES
from ..widgets.event_diff import EventDiff
from ..widgets.event_list import BatchRow, EventList, HistoryRow, verb
from ..widgets.filter_box import FilterBox
from ..widgets.messages import StatusChanged, StoreFailed
from ..widgets.split import Split
from .base import FilteringView

PAGE = 200
"""Events read at a time; more are read as the cursor nears the end."""
FIELDS = (
    Field("actor", ("a",), {a: a for a in ACTORS}),
    Field("verb", ("did", "v"), {v: v for v in LOGGED}),
    Field("kind", ("k",), KIND_NAMES),
    Field("origin", ("o", "scope")),
)


def event_matches(e: EventRow, q: Query) -> bool:
    """Does the event pass the history filter?"""
    if isinstance(e, CorruptRow):
        return not q.fields and all(w in (e.id + e.reason).casefold() for w in q.words)
    if (a := q.get("actor")) and e.actor not in a:
        return False
    if (v := q.get("verb")) and verb(e) not in v:
        return False
    records = [r for r in (*e.after, *e.before) if r is not None]
    if (k := q.get("kind")) and not any(r.get("kind") in k for r in records):
        return False
    if (o := q.values("origin")) and not any(x in e.scope.casefold() for x in o):
        return False
    if q.words:
        text = " ".join(
            [e.reason, *(str(r.get("content", "")) + " " + str(r.get("id", "")) for r in records)]
        ).casefold()
        return all(w in text for w in q.words)
    return True


class HistoryView(FilteringView):
    """The event list beside the selected event's diff and its undo preview."""

    FOCUS = "#event-list"
    FIELDS = FIELDS
    BOX = "#history-filter"
    SETTLE = 0.05
    """Seconds the cursor must rest before the undo preview is computed."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "f",
            "toggle_fields",
            "Fields",
            id="history.fields",
            tooltip="Show every field of the records, or only the changed ones",
        ),
    ]

    @dataclass
    class EventsLoaded(Message):
        """A page of the event history (or all of it)."""

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
        self.events: list[EventRow] = []
        """Every event read so far, newest first (the list shows those the filter keeps)."""
        self.exhausted = False
        self.expanded: set[str] = set()
        """Bulk actions whose events are listed under them."""
        self._previewed: str | None = None  # the event whose undo preview is shown
        self._to_newest = False  # this dashboard wrote: the next read puts the cursor on it
        self._told_new = False  # the status line counts events new above the cursor
        self._batch_of: dict[str, Batch] | None = None  # the journal, read once per change

    def compose(self) -> ComposeResult:
        yield FilterBox(
            delay=0.12,
            placeholder="/ filter: words, actor:manual verb:pin kind:fact origin:…",
            id="history-filter",
        )
        with Split(width=50, id="history-main"):
            yield EventList(id="event-list")
            yield EventDiff(id="event-diff")

    def activated(self) -> None:
        if self.stale:
            self.load_events()

    def state_changed(self, change: Change) -> None:
        if isinstance(change, Regrouped | OwnWrite | Reloaded | LiveChanged):
            self._batch_of = None  # a bulk action may have been journaled: read it again
        if isinstance(change, Regrouped | Scoped):
            self._show()
        elif isinstance(change, OwnWrite | Reloaded):
            self.stale = True
            self._to_newest = self._to_newest or isinstance(change, OwnWrite)
            if self.active:
                self.load_events()
        elif isinstance(change, LiveChanged) and change.events and not self.stale:
            # pi wrote: the cursor stays on its event, and the status line counts the new
            known = {e.id for e in self.events}
            fresh = {e.id for e in change.events if e.id not in known}
            self.events = [*(e for e in change.events if e.id in fresh), *self.events]
            self._show(fresh=fresh)
            self.query_one(EventList).flash(fresh)

    def status_parts(self) -> list[str]:
        shown = len(self.query_one(EventList).rows)
        more = "" if self.exhausted else "+ (more as you scroll)"
        scoped = "" if self.state.scope.everything else f" · {self.state.scope.name}"
        parts = [f"{shown:,} event(s) shown of {len(self.events):,}{more}{scoped}"]
        if new := self.query_one(EventList).new_above:
            parts.append(f"{new:,} new above (g: go to them)")
        self._told_new = bool(new)
        if self.filter_query.words or self.filter_query.fields:
            parts.append(f"filter: {self.query_one(FilterBox).value}")
        return parts

    @property
    def busy(self) -> bool:
        row = self.query_one(EventList).highlighted
        behind = self.query_one(EventDiff).shown is not row
        wants_preview = isinstance(row, Event) and bool(row.after) and self._previewed != row.id
        return super().busy or behind or wants_preview

    # ------------------------------------------------------------ the list and its filter

    def refilter(self) -> None:
        if self.filtered and not self.exhausted:
            self.load_events(everything=True)  # a filter looks at the whole history
        self._show()

    def _show(self, *, top: bool = False, fresh: Collection[str] = ()) -> None:
        q = self.filter_query
        scope = self.state.scope
        rows = self._grouped([] if q.errors else [
            e for e in self.events
            if event_matches(e, q) and scope.shows(e)
        ])  # fmt: skip
        event_list = self.query_one(EventList)
        event_list.exhausted = self.exhausted or self.filtered
        where = "" if scope.everything else f" in {one_line(scope.name)}"
        shown = sum(1 for e in self.events if scope.shows(e))
        event_list.empty_text = (
            no_match("event", self.filter_text, shown, "events read", where)
            if self.filtered
            else f"No events{where}: pi has written none yet."
        )
        event_list.set_rows(rows, top=top, fresh=fresh)
        self.post_message(StatusChanged())

    def _batches(self) -> dict[str, Batch]:
        """Each journaled event's bulk action, read from the journal once per change to
        the store or the journal (not per redraw: a filter redraws at each key)."""
        if self._batch_of is None:
            remembered = self.state.remembered
            batches = remembered.batches() if remembered is not None else []
            self._batch_of = {event_id: b for b in batches for event_id in b.events}
        return self._batch_of

    def _grouped(self, events: list[EventRow]) -> list[HistoryRow]:
        """The events of one bulk action as one entry (journaled by the app; without the
        journal, or with only one of them loaded, they show one by one)."""
        of = self._batches()
        members = [e for e in events if isinstance(e, Event) and e.id in of]
        out: list[HistoryRow] = []
        done: set[str] = set()
        inside: set[str] = set()
        for e in events:
            batch = of.get(e.id)
            if batch is None:
                out.append(e)
                continue
            if batch.id in done:
                continue
            done.add(batch.id)
            group = tuple(m for m in members if of[m.id] is batch)
            if len(group) < 2:
                out.append(e)
                continue
            out.append(BatchRow(batch, group))
            if batch.id in self.expanded:
                out.extend(group)
                inside.update(m.id for m in group)
        self.query_one(EventList).members = frozenset(inside)
        return out

    def on_event_list_batch_toggled(self, message: EventList.BatchToggled) -> None:
        batch_id = message.row.batch.id
        self.expanded ^= {batch_id}
        self._show()

    @work(exclusive=True, group="events", exit_on_error=False)
    async def load_events(self, before_rowid: int | None = None, everything: bool = False) -> None:
        try:
            store = await self.state.open()
            limit = None if everything else PAGE
            rows = await store.events(limit=limit, before_rowid=before_rowid)
        except StoreError as exc:
            self.post_message(StoreFailed(exc))
            return
        exhausted = everything or len(rows) < PAGE
        self.post_message(self.EventsLoaded(rows, before_rowid is not None, exhausted))

    def on_history_view_events_loaded(self, message: EventsLoaded) -> None:
        self.events = [*self.events, *message.rows] if message.append else list(message.rows)
        self.exhausted = message.exhausted
        top = False
        if not message.append:
            self.stale = False
            top, self._to_newest = self._to_newest, False  # on what this dashboard wrote
        self._show(top=top)

    def on_event_list_more_wanted(self, message: EventList.MoreWanted) -> None:
        if not self.filtered:
            self.load_events(message.before_rowid)

    # ------------------------------------------------------------ the diff and undo

    def action_toggle_fields(self) -> None:
        diff = self.query_one(EventDiff)
        diff.toggle_fields()
        self.notify("Showing every field" if diff.all_fields else "Showing the changed fields")

    def on_event_list_highlighted(self, message: EventList.Highlighted) -> None:
        if self._told_new and not self.query_one(EventList).new_above:
            self.post_message(StatusChanged())  # the cursor reached them
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
        if isinstance(row, BatchRow):
            self.curator.undo_batch(row.batch)
            return
        if row is None or isinstance(row, CorruptRow):
            self.notify("Select a valid event to undo", severity="warning")
            return
        self.curator.undo_event(row.id, f"event {row.id} ({one_line(row.reason, 60)})")
