"""The Timeline view: the store over time, from the event log.

Four panels over one time axis, a column per bucket (a day or a week or four,
by zoom):

- the records in each state at the bucket's end, replayed from the event log by
  the time dial's path (``DashboardState.standing``);
- the events written in the bucket, by actor;
- the learning runs that finished or failed in it;
- the spend their providers reported.

``←``/``→`` move the cursor (the status line says its moment and counts),
``+``/``-`` zoom, and ``enter`` turns the time dial to the cursor's moment and
shows the memory list as of then. The replay runs in a worker and the plot fills
in as each bucket is counted, newest first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from textual import work
from textual.app import ComposeResult
from textual.message import Message
from textual.widgets import Static

from store import (
    DAY_MS,
    Bucket,
    Event,
    RunDay,
    Standing,
    StoreError,
    activity,
    buckets,
    parse_ms,
    runs,
)

from ..core.state import Change, DashboardState, LiveChanged, OwnWrite, Reloaded, Scoped
from ..widgets.messages import NOW, ShowView, StatusChanged, StoreFailed
from ..widgets.timeline_chart import Panel, TimelineChart, day_label
from .base import BaseView

STATES = ("pinned", "fresh", "aging", "dormant", "disputed", "conflicted", "forgotten")
ACTORS = ("local", "model", "manual", "migration")


@dataclass(frozen=True, slots=True)
class Zoom:
    label: str
    """The span, as the heading says it."""
    days: int
    """Days per column."""
    count: int
    """Columns."""

    @property
    def per(self) -> str:
        """A column's span as a noun: "day", "week", "4 weeks"."""
        if self.days % 7 == 0 and self.days > 7:
            return f"{self.days // 7} weeks"
        return {1: "day", 7: "week"}.get(self.days, f"{self.days} days")

    @property
    def each(self) -> str:
        """How often a column comes: "a day", "a week", "every 4 weeks"."""
        return f"a {self.per}" if self.days in (1, 7) else f"every {self.per}"


ZOOMS = (
    Zoom("4 weeks", 1, 28),
    Zoom("8 weeks", 1, 56),
    Zoom("6 months", 7, 26),
    Zoom("12 months", 7, 52),
    Zoom("4 years", 28, 52),
)
DEFAULT_ZOOM = 3
"""The last 12 months, a column a week."""


class TimelineView(BaseView):
    """A heading line over the chart."""

    FOCUS = "#timeline-chart"

    @dataclass
    class Counted(Message):
        """The range's events and runs, read for load number ``generation``."""

        generation: int
        buckets: Sequence[Bucket]
        events: Mapping[int, Counter[str]]
        runs: Mapping[int, RunDay]

    @dataclass
    class Stood(Message):
        """The records' states at one bucket's end."""

        generation: int
        standing: Standing

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(state, id=id)
        self.zoom = DEFAULT_ZOOM
        self.buckets: Sequence[Bucket] = ()
        self.events: Mapping[int, Counter[str]] = {}
        self.runs: Mapping[int, RunDay] = {}
        self.stood: dict[float, Standing] = {}
        """The states counted at each moment (kept across zooms and visits: the past
        does not change when events are added after it)."""
        self._generation = 0
        self._stale = True

    def compose(self) -> ComposeResult:
        yield Static(id="timeline-heading", markup=False)
        yield TimelineChart(id="timeline-chart")

    # ------------------------------------------------------------ hooks

    def activated(self) -> None:
        if self._stale or not self.buckets:
            self.load()

    def state_changed(self, change: Change) -> None:
        if isinstance(change, Scoped):
            self.stood.clear()  # counted for another scope
            self._changed()
        elif isinstance(change, Reloaded):
            if not change.partial:
                self.stood.clear()
                self._changed()
        elif isinstance(change, LiveChanged | OwnWrite):
            self._forget_after(change)
            self._changed()

    def _changed(self) -> None:
        self._stale = True
        if self.active:
            self.load()

    def _forget_after(self, change: LiveChanged | OwnWrite) -> None:
        """A new event changes every moment from its own on: those are counted again."""
        moments = [parse_ms(e.at) for e in getattr(change, "events", ()) if isinstance(e, Event)]
        known = [m for m in moments if m is not None]
        since = min(known) if known else self.state.clock()
        if isinstance(change, OwnWrite) or len(known) < len(moments):
            since = min(since, self.state.clock())
        self.stood = {when: s for when, s in self.stood.items() if when < since}

    @property
    def busy(self) -> bool:
        return super().busy or (self.active and self._stale)

    def status_parts(self) -> list[str]:
        if not self.buckets:
            return ["timeline: reading the event log…"]
        return [self.describe(self.query_one(TimelineChart).cursor, short=True)]

    # ------------------------------------------------------------ reading

    def load(self) -> None:
        self._generation += 1
        self._stale = False
        self._read(self._generation, ZOOMS[self.zoom])

    @work(exclusive=True, group="timeline", exit_on_error=False)
    async def _read(self, generation: int, zoom: Zoom) -> None:
        state = self.state
        now = state.clock()
        columns = buckets(now, zoom.days, zoom.count)
        try:
            store = await state.open()
            start = columns[0].start
            project = state.scope.project
            events = await activity(store, start, now, project)
            learned = await runs(store, start, now, project)
            self.post_message(self.Counted(generation, columns, events, learned))
            wanted = [b.end for b in columns if b.end not in self.stood]

            def counted(found: Standing) -> None:
                self.post_message(self.Stood(generation, found))

            await state.standing(wanted, counted)
        except StoreError as exc:
            self.post_message(StoreFailed(exc))

    def on_timeline_view_counted(self, message: Counted) -> None:
        if message.generation != self._generation:
            return
        self.buckets, self.events, self.runs = message.buckets, message.events, message.runs
        ends = {b.end for b in self.buckets}
        self.stood = {  # a day's end serves every zoom; an earlier "now" serves none
            when: found
            for when, found in self.stood.items()
            if (when + 1) % DAY_MS == 0 or when in ends
        }
        self._draw()

    def on_timeline_view_stood(self, message: Stood) -> None:
        self.stood[message.standing.at] = message.standing
        if message.generation == self._generation:
            self._draw()

    # ------------------------------------------------------------ drawing

    def _draw(self) -> None:
        zoom = ZOOMS[self.zoom]
        columns = self.buckets
        states: list[Mapping[str, float] | None] = []
        unknown: set[int] = set()
        for i, b in enumerate(columns):
            found = self.stood.get(b.end)
            if found is not None and not found.exact:
                unknown.add(i)
            states.append(None if found is None else {k: float(v) for k, v in found.counts.items()})
        events = [self._events(b) for b in columns]
        learned = [self._runs(b) for b in columns]
        seen = {s for v in states if v for s, n in v.items() if n}
        panels = (
            Panel(
                "Records by state, at each "
                + (f"{zoom.per}'s end" if zoom.days in (1, 7) else "column's end"),
                tuple(s for s in STATES if s in seen) or ("fresh",),
                states,
                frozenset(unknown),
                weight=3,
            ),
            Panel(
                f"Events {zoom.each}",
                tuple(a for a in ACTORS if any(e.get(a) for e in events)) or ("model",),
                events,
                weight=2,
            ),
            Panel(
                f"Learning runs {zoom.each}",
                ("done", "failed"),
                [{"done": r.done, "failed": r.failed} for r in learned],
                labels={"done": "finished"},
            ),
            Panel(
                f"Model spend {zoom.each} (as reported)",
                ("usd",),
                [{"usd": r.usd} for r in learned],
                money=True,
                labels={"usd": "US$"},
            ),
        )
        self.query_one(TimelineChart).show(columns, panels)
        self._head()

    def _head(self) -> None:
        """The span and its keys, then the cursor's bucket in full."""
        zoom, columns = ZOOMS[self.zoom], self.buckets
        counted = sum(1 for b in columns if b.end in self.stood)
        progress = f" · counting {counted} of {len(columns)}…" if counted < len(columns) else ""
        head = f"The last {zoom.label}, a column {zoom.each}{progress} · ←/→ +/- enter"
        if columns:
            head += "\n" + self.describe(self.query_one(TimelineChart).cursor)
        self.query_one("#timeline-heading", Static).update(head)
        self.post_message(StatusChanged())

    def _events(self, b: Bucket) -> dict[str, float]:
        total: Counter[str] = Counter()
        for day in b.days():
            total.update(self.events.get(day, Counter()))
        return {k: float(v) for k, v in total.items()}

    def _runs(self, b: Bucket) -> RunDay:
        total = RunDay()
        for day in b.days():
            found = self.runs.get(day)
            if found is not None:
                total.done += found.done
                total.failed += found.failed
                total.usd += found.usd
                total.priced += found.priced
        return total

    def describe(self, i: int, *, short: bool = False) -> str:
        """The bucket at ``i`` in one line: its days, its records, its activity
        (``short``: the totals only, for the status line)."""
        b = self.buckets[i]
        found = self.stood.get(b.end)
        if found is None:
            records = "counting…"
        elif not found.exact:
            records = "not in the event log"
        else:
            total = sum(found.counts.values())
            parts = [f"{found.counts[s]} {s}" for s in STATES if found.counts.get(s)]
            records = f"{total} records" + (f": {', '.join(parts)}" if parts and not short else "")
        events = self._events(b)
        told = ", ".join(f"{int(events[a])} {a}" for a in ACTORS if events.get(a))
        ran = self._runs(b)
        spend = f" · ${ran.usd:.4f} reported" if ran.priced else ""
        if short:
            return (
                f"{day_label(b, short=True)} · {records} · {int(sum(events.values()))} events · "
                f"{ran.done + ran.failed} runs{spend}"
            )
        return (
            f"{day_label(b)} · {records} · {int(sum(events.values()))} events"
            f"{f' ({told})' if told else ''} · {ran.done} runs finished, {ran.failed} failed"
            f"{spend}"
        )

    # ------------------------------------------------------------ the chart's keys

    def on_timeline_chart_moved(self, message: TimelineChart.Moved) -> None:
        self._head()

    def on_timeline_chart_zoom(self, message: TimelineChart.Zoom) -> None:
        zoom = max(0, min(len(ZOOMS) - 1, self.zoom + message.step))
        if zoom == self.zoom:
            edge = "closest" if message.step < 0 else "widest"
            self.notify(f"Already at the {edge} zoom ({ZOOMS[zoom].label})", title="Timeline")
            return
        self.zoom = zoom
        self.load()

    def on_timeline_chart_picked(self, message: TimelineChart.Picked) -> None:
        today = message.index == len(self.buckets) - 1
        # the memory list as of that moment (or now)
        when = NOW if today else self.buckets[message.index].end
        self.post_message(ShowView("memories", dial=when))
