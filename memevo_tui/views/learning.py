"""The Learning view: pi's learning queue, its figures, and one source in full.

``/`` filters by state, kind, origin, failure code and words. ``enter`` on a
source asks the main screen to show its records in the memory list.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from textual import work
from textual.app import ComposeResult
from textual.message import Message
from textual.timer import Timer

from store import (
    FAILURE_CODES,
    CorruptRow,
    Event,
    Memory,
    ModelCall,
    QueueStatus,
    Source,
    StoreError,
    queue_status,
)

from ..core.filters import Field, Query
from ..core.state import Change, DashboardState, Dialed, LiveChanged, Reloaded, Scoped
from ..core.text import no_match, one_line
from ..widgets.filter_box import FilterBox
from ..widgets.learning_status import LearningStatus
from ..widgets.messages import ShowView, StatusChanged, StoreFailed
from ..widgets.source_detail import SourceDetail
from ..widgets.source_list import STATE_GLYPHS, SourceList, next_change, source_state
from ..widgets.split import Split
from .base import FilteringView

PAGE = 500
"""Sources read at a time, newest first."""
FIELDS = (
    Field("state", ("s",), {s: s for s in STATE_GLYPHS}),
    Field("kind", ("k",)),
    Field("origin", ("o", "scope")),
    Field("code", ("error", "failure"), {c: c for c in FAILURE_CODES}),
    Field("id", (), whole=True),
)


def source_matches(s: Source | CorruptRow, q: Query, now_ms: float) -> bool:
    """Does the source pass the learning filter?"""
    if isinstance(s, CorruptRow):
        return not q.fields and all(w in (s.id + s.reason).casefold() for w in q.words)
    if (states := q.get("state")) and source_state(s, now_ms) not in states:
        return False
    if (kinds := q.values("kind")) and not any(k in s.kind.casefold() for k in kinds):
        return False
    if (origins := q.values("origin")) and not any(o in s.scope.casefold() for o in origins):
        return False
    if (codes := q.get("code")) and s.last_error not in codes:
        return False
    if (ids := q.values("id")) and s.id not in {i for v in ids for i in v.split(",")}:
        return False
    text = " ".join((s.id, s.content, s.last_error or "", str(s.diagnostic))).casefold()
    return all(w in text for w in q.words)


class LearningView(FilteringView):
    """Queue figures on top, the sources below beside the highlighted one's detail."""

    FOCUS = "#source-list"
    FIELDS = FIELDS
    BOX = "#learning-filter"

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
        self.sources: list[Source | CorruptRow] = []
        self._detailed: str | None = None  # the source whose details are shown
        self._details: tuple[Sequence[ModelCall], Sequence[Event | CorruptRow]] = ((), ())
        self._clock: Timer | None = None  # redraws when the clock passes a deadline
        self._drawn_at = 0.0  # the clock the rows were last drawn at
        self._told_new = False  # the status line counts sources new above the cursor

    def compose(self) -> ComposeResult:
        yield LearningStatus(id="learning-status")
        yield FilterBox(
            delay=0.12,
            placeholder="/ filter: words, state:stalled kind:summary origin:… code:timeout",
            id="learning-filter",
        )
        with Split(width=36, id="learning-main"):
            yield SourceList(id="source-list")
            yield SourceDetail(id="source-detail")

    def activated(self) -> None:
        self.load_sources()

    def state_changed(self, change: Change) -> None:
        # Hidden, it reads nothing: showing it reads the queue again (``activated``).
        if isinstance(change, LiveChanged | Reloaded) and self.active:
            self.load_sources()
        elif isinstance(change, Dialed | Scoped):
            self._show()

    def status_parts(self) -> list[str]:
        source_list = self.query_one(SourceList)
        shown = len(source_list.rows)
        scoped = "" if self.state.scope.everything else f" · {self.state.scope.name}"
        parts = (
            [f"{shown:,} source(s) shown of {len(self.sources):,}{scoped}"] if self.sources else []
        )
        if source_list.new_above:
            parts.append(f"{source_list.new_above:,} new above (g: go to them)")
        self._told_new = bool(source_list.new_above)
        if self.filtered:
            parts.append(f"filter: {self.query_one(FilterBox).value}")
        return [*parts, self.summary] if self.summary else parts

    @property
    def busy(self) -> bool:
        row = self.query_one(SourceList).highlighted
        behind = self.query_one(SourceDetail).shown is not row
        wants_details = isinstance(row, Source) and self._detailed != row.id
        return super().busy or behind or wants_details

    def refilter(self) -> None:
        self._show()

    def _show(self, fresh: Collection[str] = ()) -> None:
        """The sources the filter keeps. ``fresh``: the ids new to the queue; the cursor
        and what is on screen stay where they are, and the status line counts those
        above it ("3 new above", ``g`` goes to them)."""
        q, now = self.filter_query, self.state.now()
        scope = self.state.scope
        rows = [] if q.errors else [
            s for s in self.sources
            if source_matches(s, q, now) and scope.shows(s)
        ]  # fmt: skip
        source_list = self.query_one(SourceList)
        source_list.now_ms = now
        where = "" if scope.everything else f" in {one_line(scope.name)}"
        source_list.empty_text = (
            no_match("source", self.filter_text, sum(1 for s in self.sources if scope.shows(s)),
                     "sources", where)
            if self.filtered
            else f"No sources{where}: pi has queued no learning run yet."
        )  # fmt: skip
        source_list.set_rows(rows, fresh=fresh)
        detail = self.query_one(SourceDetail)
        current = source_list.highlighted
        if current is not None and detail.shown is current and self._detailed == current.id:
            detail.show(current, *self._details, now)  # its lease and retry, as of now
        self._drawn_at = now
        self._wind(now)
        self.post_message(StatusChanged())

    def _wind(self, now: float, at_least: float = 0.0) -> None:
        """Redraw when the clock next passes a lease's expiry, a retry time or a
        countdown's step, so that a run whose lease ran out reads "stalled" then
        (``at_least`` seconds from now)."""
        if self._clock is not None:
            self._clock.stop()
            self._clock = None
        wait = next_change(self.sources, now)
        if wait is not None:
            self._clock = self.set_timer(max(at_least, wait / 1000 + 0.01), self._tick)

    def _tick(self) -> None:
        self._clock = None
        if not self.active:
            return  # showing the view again reads the queue, and draws it then
        now = self.state.now()
        if now != self._drawn_at:
            self._show()
        else:  # a clock standing still (the time dial at a fixed moment): look each second
            self._wind(now, at_least=1.0)

    def on_source_list_open_requested(self, message: SourceList.OpenRequested) -> None:
        """The records the source created or last replaced, in the memory list."""
        message.stop()
        source_id = message.source_id
        if not any(
            isinstance(m, Memory)
            and source_id in (m.source_entry_id, m.evidence.source_id if m.evidence else "")
            for m in self.state.rows
        ):
            self.notify(
                "No record in the store was created or last replaced by this source",
                title="Nothing to show",
            )
            return
        self.post_message(ShowView("memories", "open_for", (f"src:{source_id}",)))

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
        before = {r.id: r for r in self.sources}
        self.sources = list(message.sources)
        fresh = {r.id for r in message.sources if r.id not in before} if before else set()
        self._show(fresh)
        if before:
            changed = fresh | {
                r.id
                for r in message.sources
                if r.id in before
                and getattr(before[r.id], "state", None) != getattr(r, "state", None)
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
        if self._told_new and not self.query_one(SourceList).new_above:
            self.post_message(StatusChanged())  # the cursor reached them
        row = message.row
        self.query_one(SourceDetail).show(row, now_ms=self.state.now())
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
            self._details = (message.calls or (), message.events)
            if message.calls is not None:
                detail = self.query_one(SourceDetail)
                detail.show(current, message.calls, message.events, self.state.now())
