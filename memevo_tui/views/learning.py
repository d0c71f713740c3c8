"""The Learning view: pi's learning queue, its figures, and one source in full.

``enter`` on a source asks the App to show its records in the memory list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message

from store import CorruptRow, Event, ModelCall, Source, StoreError
from store.status import QueueStatus, queue_status

from ..messages import StatusChanged, StoreFailed
from ..state import Change, DashboardState, LiveChanged
from ..widgets.learning_status import LearningStatus
from ..widgets.source_detail import SourceDetail
from ..widgets.source_list import SourceList
from .base import BaseView

PAGE = 500
"""Sources read at a time, newest first."""


class LearningView(BaseView):
    """Queue figures on top, the sources below beside the highlighted one's detail."""

    FOCUS = "#source-list"

    @dataclass
    class SourcesLoaded(Message):
        """The learning queue and its status figures."""

        sources: Sequence[Source | CorruptRow]
        queue: QueueStatus

    @dataclass
    class SourceDetails(Message):
        """One source's model calls and the events of its runs."""

        source_id: str
        calls: Sequence[ModelCall] | None
        """None: they could not be read."""
        events: Sequence[Event | CorruptRow]

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(state, id=id)
        self.summary = ""
        """The queue in one line, for the status line (once the queue was read)."""
        self._detailed: str | None = None  # the source whose details are shown

    def compose(self) -> ComposeResult:
        yield LearningStatus(id="learning-status")
        with Horizontal(id="learning-main", classes="split"):
            yield SourceList(id="source-list")
            yield SourceDetail(id="source-detail")

    def activated(self) -> None:
        self.load_sources()

    def state_changed(self, change: Change) -> None:
        if isinstance(change, LiveChanged) and (self.active or self.summary):
            self.load_sources()

    def status_parts(self) -> list[str]:
        return [self.summary] if self.summary else []

    @property
    def busy(self) -> bool:
        row = self.query_one(SourceList).highlighted
        behind = self.query_one(SourceDetail).shown is not row
        wants_details = isinstance(row, Source) and self._detailed != row.id
        return super().busy or behind or wants_details

    @work(exclusive=True, group="sources", exit_on_error=False)
    async def load_sources(self) -> None:
        try:
            store = await self.state.open()
            sources = await store.sources(limit=PAGE)
            queue = await queue_status(store)
        except StoreError as exc:
            self.post_message(StoreFailed(exc))
            return
        self.post_message(self.SourcesLoaded(sources, queue))

    def on_learning_view_sources_loaded(self, message: SourcesLoaded) -> None:
        source_list = self.query_one(SourceList)
        source_list.now_ms = self.state.clock()
        before = {r.id: r for r in source_list.rows}
        source_list.set_rows(list(message.sources))
        if before:
            changed = {
                r.id
                for r in message.sources
                if r.id not in before
                or getattr(before[r.id], "state", None) != getattr(r, "state", None)
            }
            source_list.flash(changed)
        q = message.queue
        by_state = q.sources_by_state
        self.summary = (
            f"learning: pending {by_state.get('pending', 0)} · running "
            f"{by_state.get('running', 0)} · failed {by_state.get('failed', 0)} "
            f"(paused {q.paused}) · calls/h {q.calls_last_hour} · ${q.usd_last_24h:.2f}/24h"
        )
        self.query_one(LearningStatus).show(q)
        self.post_message(StatusChanged())

    def on_source_list_highlighted(self, message: SourceList.Highlighted) -> None:
        row = message.row
        self.query_one(SourceDetail).show(row)
        if isinstance(row, Source):
            self.load_source_details(row.id)

    @work(exclusive=True, group="source-details", exit_on_error=False)
    async def load_source_details(self, source_id: str) -> None:
        store = self.state.store
        if store is None:
            return
        try:
            calls = await store.model_calls(source_id)
            events = await store.source_events(source_id)
        except StoreError:
            self.post_message(self.SourceDetails(source_id, None, []))
            return
        self.post_message(self.SourceDetails(source_id, calls, events))

    def on_learning_view_source_details(self, message: SourceDetails) -> None:
        current = self.query_one(SourceList).highlighted
        if current is not None and current.id == message.source_id:
            self._detailed = message.source_id
            if message.calls is not None:
                self.query_one(SourceDetail).show(current, message.calls, message.events)
