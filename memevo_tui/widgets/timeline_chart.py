"""The Timeline's plot: stacked bars, one column per bucket, in panels over one time axis.

Drawn with Rich's block characters, so it looks the same in a terminal and in a
browser tab. A bar's top is cut to an eighth of a cell (``▁``..``█``); where two
series meet inside a cell, the lower one is the foreground and the upper one the
background. A bucket not counted yet shows ``·``, one the event log cannot give
``░``. The cursor is a highlighted column across every panel.

Colours come from component classes (``timeline-chart--<series>``), so themes
set them in ``styles/app.tcss``.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import ClassVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget

from store import DAY_MS, Bucket

EIGHTHS = " ▁▂▃▄▅▆▇█"
NOT_YET = "·"
UNKNOWN = "░"
SERIES = (
    "pinned", "fresh", "aging", "dormant", "disputed", "conflicted", "forgotten",
    "local", "model", "manual", "migration", "done", "failed", "usd",
)  # fmt: skip
"""Every series a panel may stack (each has its component class)."""


@dataclass(frozen=True, slots=True)
class Panel:
    """One plot: ``series`` stacked bottom to top, a value per bucket."""

    title: str
    series: tuple[str, ...]
    values: Sequence[Mapping[str, float] | None]
    """Per bucket; None: not counted yet."""
    unknown: frozenset[int] = frozenset()
    """Buckets the event log cannot give."""
    money: bool = False
    """Values are US dollars."""
    weight: int = 1
    """Its share of the height."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """A series' name in the legend (default: its name)."""
    short: str = ""
    """The title where the whole one does not fit (default: its first word)."""

    def __post_init__(self) -> None:
        if not self.short:
            object.__setattr__(self, "short", self.title.split()[0])

    def total(self, i: int) -> float:
        found = self.values[i] if i < len(self.values) else None
        return sum(found.get(s, 0) for s in self.series) if found else 0.0

    def top(self) -> float:
        return max((self.total(i) for i in range(len(self.values))), default=0.0)

    def amount(self, value: float) -> str:
        if self.money:
            return f"${value:,.2f}" if value >= 0.01 or not value else f"${value:.4f}"
        return f"{value:,.0f}"


def heights(panels: Sequence[Panel], rows: int) -> list[int]:
    """Plot rows per panel (each has at least 1), out of ``rows`` (titles excluded)."""
    if not panels:
        return []
    rows = max(rows, len(panels))
    weights = [p.weight for p in panels]
    out = [max(1, rows * w // sum(weights)) for w in weights]
    i = 0
    while sum(out) < rows:  # what rounding left goes to the heaviest first
        out[sorted(range(len(out)), key=lambda j: -weights[j])[i % len(out)]] += 1
        i += 1
    while sum(out) > rows:
        j = max(range(len(out)), key=lambda k: out[k])
        out[j] -= 1
    return out


def column_cells(
    stack: Sequence[tuple[str, float]], scale: float, rows: int
) -> list[tuple[str, str, str]]:
    """One bar, bottom row first: (character, foreground series, background series)."""
    tops: list[tuple[str, int]] = []  # each series' top, in eighths of a cell
    cumulative = 0.0
    for name, value in stack:
        if value <= 0:
            continue
        cumulative += value
        tops.append((name, round(cumulative * scale)))
    cells: list[tuple[str, str, str]] = []
    for row in range(rows):
        low, high = row * 8, row * 8 + 8
        below = [(n, t) for n, t in tops if t > low]
        if not below:
            cells.append((" ", "", ""))
            continue
        name, top = below[0]
        if top >= high:
            cells.append(("█", name, ""))
            continue
        above = next((n for n, t in below[1:] if t > top), "")
        cells.append((EIGHTHS[top - low], name, above))
    return cells


def axis_labels(buckets: Sequence[Bucket], width: int) -> list[tuple[int, str]]:
    """(bucket index, label) for the time axis, spaced so that none overlap."""
    if not buckets:
        return []
    days = buckets[0].last - buckets[0].first + 1
    out: list[tuple[int, str]] = []
    for i, b in enumerate(buckets):
        first = datetime.fromtimestamp(b.start / 1000, UTC)
        prev = datetime.fromtimestamp(buckets[i - 1].start / 1000, UTC) if i else None
        if days == 1:
            label = first.strftime("%m-%d") if first.weekday() == 0 else ""
        elif prev is None or first.year != prev.year:
            label = (
                first.strftime("%Y") if days > 7 or first.month == 1 else first.strftime("%b %Y")
            )
        elif days <= 7 and first.month != prev.month:
            label = first.strftime("%b")
        else:
            label = ""
        if i == 0 and not label:
            label = first.strftime("%Y-%m-%d" if days == 1 else "%b %Y")
        if label:
            out.append((i, label))
    return out


class TimelineChart(Widget, can_focus=True):
    """Panels of stacked bars over the same buckets, with a cursor."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        *(f"timeline-chart--{s}" for s in SERIES),
        "timeline-chart--title",
        "timeline-chart--axis",
        "timeline-chart--cursor",
        "timeline-chart--unknown",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", "Earlier", show=False, id="timeline.left",
                tooltip="The cursor a column earlier"),
        Binding("right", "move(1)", "Later", show=False, id="timeline.right",
                tooltip="The cursor a column later"),
        Binding("g,home", "first", "First", show=False, id="timeline.first",
                tooltip="The oldest column"),
        Binding("G,end", "last", "Last", show=False, id="timeline.last",
                tooltip="The newest column (today)"),
        Binding("plus,equals_sign", "zoom(-1)", "Zoom in", id="timeline.zoom_in",
                key_display="+", tooltip="Zoom in: a shorter span, shorter buckets"),
        Binding("minus", "zoom(1)", "Zoom out", id="timeline.zoom_out", key_display="-",
                tooltip="Zoom out: a longer span"),
        Binding("enter", "pick", "Dial there", id="timeline.dial",
                tooltip="Turn the time dial to the cursor's moment and show the memories then"),
    ]  # fmt: skip

    @dataclass
    class Moved(Message):
        """The cursor moved to bucket ``index``."""

        index: int

    @dataclass
    class Zoom(Message):
        """Zoom by ``step`` levels (negative: in)."""

        step: int

    @dataclass
    class Picked(Message):
        """enter on bucket ``index``."""

        index: int

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.buckets: Sequence[Bucket] = ()
        self.panels: Sequence[Panel] = ()
        self.cursor = 0
        self.empty_text = "Reading the event log…"

    def show(self, buckets: Sequence[Bucket], panels: Sequence[Panel]) -> None:
        """Draw these; the cursor stays on the same day where it can, else on today."""
        old = self.buckets[self.cursor] if self.buckets else None
        self.buckets, self.panels = buckets, panels
        if old is None or not buckets:
            self.cursor = max(0, len(buckets) - 1)
        else:
            day = old.last
            found = next((i for i, b in enumerate(buckets) if b.first <= day <= b.last), None)
            self.cursor = len(buckets) - 1 if found is None else found
        self.refresh()

    # ------------------------------------------------------------ keys

    def _set_cursor(self, index: int) -> None:
        index = max(0, min(len(self.buckets) - 1, index))
        if index != self.cursor:
            self.cursor = index
            self.refresh()
        self.post_message(self.Moved(self.cursor))

    def action_move(self, step: int) -> None:
        self._set_cursor(self.cursor + step)

    def action_first(self) -> None:
        self._set_cursor(0)

    def action_last(self) -> None:
        self._set_cursor(len(self.buckets) - 1)

    def action_zoom(self, step: int) -> None:
        self.post_message(self.Zoom(step))

    def action_pick(self) -> None:
        if self.buckets:
            self.post_message(self.Picked(self.cursor))

    def on_click(self, event: events.Click) -> None:
        starts = self._starts()
        if self.buckets and event.x >= 1:
            self._set_cursor(max(0, bisect.bisect_right(starts, event.x) - 1))

    # ------------------------------------------------------------ drawing

    def _starts(self) -> list[int]:
        """Each column's first cell, then the end of the last: the columns share the
        width (at most 6 cells each), the wider ones spread evenly among them."""
        n = max(1, len(self.buckets))
        room = min(max(n, self.size.width - 2), 6 * n)
        return [1 + i * room // n for i in range(n + 1)]

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"timeline-chart--{name}", partial=True)

    def render(self) -> Text:
        width, height = self.size.width, self.size.height
        if not self.buckets or not self.panels:
            return Text(self.empty_text, style=self._style("title"))
        starts = self._starts()
        plot_rows = heights(self.panels, height - len(self.panels) - 1)
        cursor_bg = self._style("cursor").bgcolor
        colours = {s: self._style(s).color for s in SERIES}
        unknown = self._style("unknown")
        lines: list[Text] = []
        for panel, rows in zip(self.panels, plot_rows, strict=True):
            lines.append(self._title(panel, width))
            top = panel.top()
            scale = rows * 8 / top if top > 0 else 0.0
            columns: list[list[Text]] = []
            for i in range(len(self.buckets)):
                cw = starts[i + 1] - starts[i]
                bar = cw - 1 if cw >= 3 else cw
                cells: list[Text] = []
                here = Style(bgcolor=cursor_bg) if i == self.cursor else Style()
                found = panel.values[i] if i < len(panel.values) else None
                if i in panel.unknown or found is None:
                    mark = UNKNOWN if i in panel.unknown else NOT_YET
                    for row in range(rows):
                        glyph = mark if row == 0 else " "
                        cells.append(Text(glyph * bar + " " * (cw - bar), unknown + here))
                    columns.append(cells)
                    continue
                stack = [(s, float(found.get(s, 0))) for s in panel.series]
                for glyph, fg, bg in column_cells(stack, scale, rows):
                    style = Style(
                        color=colours.get(fg) if fg else None,
                        bgcolor=colours.get(bg) if bg else cursor_bg if i == self.cursor else None,
                    )
                    cells.append(Text(glyph * bar, style) + Text(" " * (cw - bar), here))
                columns.append(cells)
            for row in reversed(range(rows)):
                line = Text(" ", no_wrap=True, overflow="crop", end="")
                for cells in columns:
                    line.append_text(cells[row])
                line.truncate(width)
                lines.append(line)
        lines.append(self._axis(width, starts))
        out = Text("\n").join(lines[:height])
        out.no_wrap, out.overflow = True, "crop"
        return out

    def _title(self, panel: Panel, width: int) -> Text:
        """The panel's title, legend and peak: the longest form that fits ``width``."""
        peak = f"max {panel.amount(panel.top())}"
        forms = [(panel.title, " ", True), (panel.short, " ", True), (panel.short, "", True)]
        forms.append((panel.short, "", False))
        for title, space, with_peak in forms:
            line = Text(no_wrap=True, overflow="crop", end="")
            line.append(title, self._style("title"))
            for s in panel.series:
                line.append("  " if space else " ")
                line.append("■", Style(color=self._style(s).color))
                line.append(f"{space}{panel.labels.get(s, s)}")
            room = width - line.cell_len - (cell_len(peak) + 2 if with_peak else 0)
            if room >= 0 or not with_peak:
                if with_peak:
                    line.append(" " * (room + 1))
                    line.append(peak, self._style("axis"))
                line.truncate(width)
                return line
        raise AssertionError("the last form always fits")

    def _axis(self, width: int, starts: Sequence[int]) -> Text:
        chars = [" "] * width
        end = 0
        for i, label in axis_labels(self.buckets, width):
            x = starts[i]
            if x < end or x + len(label) > width:
                continue
            chars[x : x + len(label)] = label
            end = x + len(label) + 1
        line = Text("".join(chars), self._style("axis"), no_wrap=True, overflow="crop", end="")
        x, end = starts[self.cursor], starts[self.cursor + 1]
        if x < width:
            line.stylize(Style(bgcolor=self._style("cursor").bgcolor, bold=True), x, end)
        return line


def day_label(bucket: Bucket, *, short: bool = False) -> str:
    """The bucket's days, as the status line says them (``short``: the last one without
    its year when it is the first one's)."""

    def day(n: int) -> str:
        return datetime.fromtimestamp(n * DAY_MS / 1000, UTC).strftime("%Y-%m-%d")

    first, last = day(bucket.first), day(bucket.last)
    if short and first[:5] == last[:5]:
        last = last[5:]
    return first if bucket.first == bucket.last else f"{first} to {last}"
