"""The detail pane: every field of the highlighted record, as plain text."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import ClassVar

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import work
from textual.binding import BindingType
from textual.message import Message
from textual.timer import Timer

from store import POLICY, PURGED, CorruptRow, Event, Memory, StoreError, iso, parse_ms

from ..core.glyphs import STATE_MEANINGS, badge, freshness_bar, state_of, time_left
from ..core.text import visible
from .decay import DecayPlot, decay_words
from .memory_list import PROVENANCE_BINDING
from .messages import ShowProvenance
from .text_pane import TextPane


def _when(value: str | None) -> str:
    ms = parse_ms(value)
    return iso(ms)[:16].replace("T", " ") if ms is not None else "-"


def _days(value: float | None) -> str:
    if value is None:
        return "never (pinned)"
    if value <= 0:
        return "already"
    return f"in {value:.1f} days"


class _Fields:
    """Labels on the left, plain values wrapping in their own column on the right.

    Drawn as a two-column ``Table.grid`` draws it, without building one: the pane
    is laid out and painted again on every move of the cursor, and a Rich table
    measures and renders each of its cells every time (most of a redraw). Where
    a value holds a word too long for its column, the table itself draws it.
    """

    LABEL_WIDTH = 12

    def __init__(self) -> None:
        self.rows: list[tuple[str, Text]] = []

    def __call__(self, label: str, value: str, style: str = "") -> None:
        self.rows.append((label, Text(visible(value), style=style)))

    def gap(self) -> None:
        self.rows.append(("", Text("")))

    def _as_table(self) -> Table:
        table = Table.grid(padding=(0, 1))
        table.add_column(justify="right", style="bold", min_width=self.LABEL_WIDTH, no_wrap=True)
        table.add_column(ratio=1)
        for label, value in self.rows:
            table.add_row(label, value)
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        left = max(self.LABEL_WIDTH, *(cell_len(label) for label, _ in self.rows)) + 1
        room = options.max_width - left
        widest = max((value.cell_len for _, value in self.rows), default=0)
        longest_word = max(
            (cell_len(word) for _, value in self.rows for word in value.plain.split()),
            default=0,
        )
        if room < 1 or longest_word > room or "\n" in "".join(v.plain for _, v in self.rows):
            yield self._as_table()
            return
        width = min(room, widest)
        bold = Style.parse("bold")
        blank = Segment(" " * left, bold)
        new_line = Segment.line()
        for label, value in self.rows:
            head = Segment(" " * (left - 1 - cell_len(label)) + label + " ", bold)
            lines: list[Text] = (
                list(value.wrap(console, width, justify="left", overflow="ellipsis"))
                if width
                else []
            )
            for n, line in enumerate(lines or [Text("")]):
                yield head if n == 0 else blank
                yield from line.render(console)
                pad = width - line.cell_len
                if pad > 0:
                    yield Segment(" " * pad)
                yield new_line


def describe(row: Memory | CorruptRow | None) -> Text:
    """The record's text and standing. Store text is plain text, never markup."""
    out = Text()
    if row is None:
        out.append("No memory selected.", style="italic")
        return out
    if isinstance(row, CorruptRow):
        out.append(f"{badge('corrupt')}  {visible(row.id)}\n", style="bold")
        out.append(f"{visible(row.reason)}\n\nRaw row (shown, never acted upon):\n")
        out.append(visible(row.raw[:4000], keep_newlines=True))
        return out
    state = state_of(row)
    out.append(visible(row.content, keep_newlines=True))
    out.append("\n\n")
    out.append(f"{badge(state)}\n", style="bold")
    out.append(STATE_MEANINGS[state], style="italic")
    if row.disputed and row.status == "conflicted":
        out.append(" (stored by pi as conflicted: quarantined)", style="italic")
    return out


def describe_fields(row: Memory | CorruptRow | None) -> RenderableType:
    """Identity, then how the record decays: the rule, where it stands, the plot."""
    if not isinstance(row, Memory):
        return ""
    q = row.quality
    field = _Fields()
    field.gap()
    field("id", row.id)
    field("kind", row.kind)
    field("status", row.status)
    field("layer", row.layer)
    field("origin", row.scope)
    field("revision", str(row.revision))
    field.gap()
    field("decay", decay_words(row))
    left = "never dormant" if row.pinned else f"{time_left(row):.0%} of its horizon left"
    field("time left", f"{freshness_bar(time_left(row), 10)} {left}")
    field("freshness", f"{q.freshness:.3f} (its floor: {POLICY[row.kind][1]:.2f})")
    field("age", f"{q.age_days:.1f} days since confirmation")
    field("aging", _days(q.days_until_aging))
    field("dormant", _days(q.days_until_dormant))
    if row.pinned:
        return field
    return Group(field, Text(""), DecayPlot(row))


def describe_more(row: Memory | CorruptRow | None) -> RenderableType:
    """The quality factors, the dates and the provenance."""
    if not isinstance(row, Memory):
        return ""
    q = row.quality
    field = _Fields()
    field.gap()
    field("evidence", f"{q.basis}/{q.method}  ×{q.evidence_weight:.2f}")
    field("utility", f"{row.utility.verdict if row.utility else '-'}  ×{q.utility:g}")
    field("accuracy", f"{row.accuracy.verdict if row.accuracy else '-'}  ×{q.accuracy:g}")
    field("factor", f"{q.factor:.4f}")
    field.gap()
    field("created", _when(row.created_at))
    field("updated", _when(row.updated_at))
    confirmed = _when(q.confirmed_at)
    if row.reinforced_at:
        confirmed += "  (reinforced by later evidence)"
    field("confirmed", confirmed)
    if row.evidence is not None:
        field("source", row.evidence.source_id)
        field("observed", _when(row.evidence.at))
    field("entry", row.source_entry_id)
    field("search terms", ", ".join(row.search_terms) or "-")
    field("suppressed", f"{len(row.suppressed_hashes)} earlier text(s) blocked")
    field.gap()
    return field


NOT_IN_EVENT_LOG = (
    "not in the event log: no event names this record; it is taken to exist from its createdAt"
)


def describe_events(events: Sequence[Event | CorruptRow]) -> Text:
    out = Text()
    if not events:
        out.append("History\n", style="bold underline")
        out.append(f"  {NOT_IN_EVENT_LOG}\n", style="italic")
        return out
    out.append(f"History ({len(events)} event(s), newest first)\n", style="bold underline")
    for e in events:
        if isinstance(e, CorruptRow):
            out.append(f"  corrupt event {visible(e.id)}: {e.reason}\n", style="italic")
            continue
        out.append(f"  {e.at[:16].replace('T', ' ')}  ", style="dim")
        out.append(f"{e.actor:<8} ", style="bold")
        out.append(visible(e.reason)[:120])
        out.append("\n")
    return out


Row = Memory | CorruptRow
EventRow = Event | CorruptRow
EventLoader = Callable[[str], Awaitable[Sequence[EventRow]]]


class MemoryDetail(TextPane, can_focus=True):
    """Scrollable details of one record, then its own events.

    ``follow`` keeps it on a list's highlighted row: the list redraws at once and
    the pane catches up when the cursor rests, so holding j costs one list line
    per row and nothing more.
    """

    DELAY = 0.08
    """Seconds the cursor must rest before the pane follows it: longer than a key
    repeat (30 to 40 ms), so holding or tapping j moves the list alone, and short
    enough not to be seen as a lag (redrawing the pane costs 10 to 20 ms at 100,000
    records on the two-core development machine)."""

    class EventsLoaded(Message, bubble=False):
        """A record's own events arrived (posted by the pane to itself)."""

        def __init__(self, memory_id: str, events: Sequence[EventRow] | None) -> None:
            super().__init__()
            self.memory_id = memory_id
            self.events = events
            """None: they could not be read."""

    EVENTS_WAIT = 0.05
    """Seconds the pane waits for a record's events before it shows the record alone:
    they usually come within a few milliseconds, and one redraw then shows both."""

    BODY, FIELDS, MORE, EVENTS, TURNS = range(5)
    """Its parts, top to bottom: the text and standing, identity and decay, the
    quality factors and provenance, the record's own events, and its recall log (the
    turns that injected it, once pi's sessions were replayed)."""

    def __init__(
        self,
        *,
        load_events: EventLoader | None = None,
        injected: Callable[[str], str | None] | None = None,
        purged: Callable[[str, str], str] | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(5, id=id)
        self._load_events = load_events
        self._injected = injected
        self._purged = purged
        self._timer: Timer | None = None
        self._timer_starts = 0  # bumped at each start and stop: a late call is dropped
        self._waiting_for: str | None = None  # the record whose events come before it
        self._wanted: Row | None = None
        self.shown: Row | None = None
        """The row the pane shows."""
        self.events_for: str | None = None
        """The id of the record whose events were last fetched (shown, or unreadable)."""

    BINDINGS: ClassVar[list[BindingType]] = [PROVENANCE_BINDING]

    def action_provenance(self) -> None:
        if isinstance(self.shown, Memory):
            self.post_message(ShowProvenance(self.shown.id))

    def follow(self, row: Row | None) -> None:
        """Show ``row`` once the cursor rests on it (nothing to do when it is already
        shown in full: a row put in above the cursor moves it, not its record)."""
        if row is self._wanted and self.caught_up_with(row):
            return
        self._wanted = row
        self._start_timer(self.DELAY, self._catch_up)
        self._waiting_for = None

    def _start_timer(self, delay: float, then: Callable[[], None]) -> None:
        self._stop_timer()
        started = self._timer_starts

        def fire() -> None:
            # A timer that fired just before it was stopped still calls back: not now.
            if started == self._timer_starts:
                self._timer = None
                then()

        self._timer = self.set_timer(delay, fire)

    def _stop_timer(self) -> None:
        self._timer_starts += 1
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _catch_up(self) -> None:
        row = self._wanted  # the latest row asked for, never a stale one
        if isinstance(row, Memory) and self._load_events is not None:
            # Its events first, then the record and its events in one redraw; when they
            # are slow to come, the record alone meanwhile.
            self._fetch_events(row.id)
            self._start_timer(self.EVENTS_WAIT, self._show_wanted)
            self._waiting_for = row.id
        else:
            self.show(row)

    def _show_wanted(self) -> None:
        self._waiting_for = None
        self.show(self._wanted)

    @work(exclusive=True, group="record-events", exit_on_error=False)
    async def _fetch_events(self, memory_id: str) -> None:
        assert self._load_events is not None
        try:
            events: Sequence[EventRow] | None = await self._load_events(memory_id)
        except StoreError:
            events = None
        self.post_message(self.EventsLoaded(memory_id, events))

    def on_memory_detail_events_loaded(self, message: EventsLoaded) -> None:
        if self._waiting_for is not None and self._waiting_for == message.memory_id:
            self._stop_timer()
            self._waiting_for = None
            self.show(self._wanted)
        shown = self.shown
        if shown is not None and shown.id == message.memory_id:
            self.events_for = message.memory_id
            if message.events is not None:
                self.show_events(message.events)

    def caught_up_with(self, row: Row | None) -> bool:
        """True when the pane shows ``row`` in full: its fields, then its events."""
        if self._timer is not None or self.shown is not row:
            return False
        return not isinstance(row, Memory) or self._load_events is None or self.events_for == row.id

    def show(self, row: Row | None) -> None:
        self.shown = self._wanted = row
        self.events_for = None
        self.set_part(self.BODY, describe(row))
        self.set_part(self.FIELDS, describe_fields(row))
        self.set_part(self.MORE, describe_more(row))
        self.set_part(self.EVENTS, "")
        self.show_recall_log()
        self.scroll_home(animate=False)

    def show_recall_log(self) -> None:
        """The shown record's recall log, as far as pi's sessions were replayed."""
        row = self.shown
        if not isinstance(row, Memory):
            self.set_part(self.TURNS, "")
            return
        line = self._injected(row.id) if self._injected else None
        part = Text(f"\nRecall log: {line}", style="dim") if line else Text()
        if self._purged is not None and PURGED in row.content:  # "purged on DATE"
            part.append(f"\n{self._purged(row.id, row.content)}", style="bold")
        self.set_part(self.TURNS, part if part.plain else "")

    def show_events(self, events: Sequence[EventRow]) -> None:
        self.set_part(self.EVENTS, describe_events(events))
