"""How a record decays: its kind's rule and where it stands, in words and as a small plot.

Decay is a pure function of time (STORE.md §3.2): freshness falls from 1 toward
its kind's floor with a half-life, the record is aging past half its kind's
dormancy horizon and dormant past the horizon, all counted from its last
confirmation (the later of ``updatedAt`` and ``reinforcedAt``).
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.style import Style
from rich.text import Text

from store import DAY_MS, POLICY, Memory, iso, parse_ms

KIND_PLURALS = {
    "fact": "facts",
    "preference": "preferences",
    "decision": "decisions",
    "project_state": "project states",
}
MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
ROWS = 4
GUTTER = 6
_EIGHTHS = " ▁▂▃▄▅▆▇█"


def day(ms: float) -> str:
    """``17 Oct 2026`` (UTC)."""
    text = iso(ms)
    return f"{int(text[8:10])} {MONTHS[int(text[5:7]) - 1]} {text[:4]}"


def _days(value: float) -> str:
    return f"{value:g} day" + ("" if value == 1 else "s")


class Timeline:
    """The instants that matter for one record's decay, in epoch ms."""

    def __init__(self, m: Memory) -> None:
        q = m.quality
        self.half_life, self.floor, self.horizon = POLICY[m.kind]
        self.updated = parse_ms(m.updated_at) or 0.0
        self.confirmed = parse_ms(q.confirmed_at) or self.updated
        self.now = self.confirmed + q.age_days * DAY_MS
        self.aging = self.confirmed + self.horizon / 2 * DAY_MS
        self.dormant = self.confirmed + self.horizon * DAY_MS
        self.reinforced = self.confirmed > self.updated

    def freshness(self, at: float) -> float:
        anchor = self.confirmed if at >= self.confirmed else self.updated
        age_days = max(0.0, (at - anchor) / DAY_MS)
        return self.floor + (1 - self.floor) * 2 ** (-age_days / self.half_life)


def decay_words(m: Memory) -> str:
    """The rule of the record's kind and where the record stands, in one paragraph."""
    if m.pinned:
        return (
            "pinned: it never decays and never goes dormant, and learning runs never "
            "change it; unpin it (p) to let it age again"
        )
    t = Timeline(m)
    kind = KIND_PLURALS.get(m.kind, m.kind)
    rule = (
        f"{kind} go dormant {_days(t.horizon)} after their last confirmation "
        f"(aging after {_days(t.horizon / 2)})"
    )
    confirmed = f"confirmed {day(t.confirmed)}"
    if t.reinforced:
        confirmed += f" (again, by later evidence; written {day(t.updated)})"
    aging = f"aging {'since' if t.now >= t.aging else 'from'} {day(t.aging)}"
    dormant = f"dormant {'since' if t.now >= t.dormant else 'from'} {day(t.dormant)}"
    words = f"{rule}; {confirmed}, {aging}, {dormant}; a later mention by evidence revives it"
    if m.status in ("forgotten", "conflicted") or m.disputed:
        words += f". While {m.state}, it is never recalled, however fresh"
    return words


class DecayPlot:
    """Freshness over time, from the last write to past the horizon (a Rich renderable).

    The area above the floor is freshness; ``◐`` marks where aging starts, ``○``
    where dormancy starts, ``↻`` a confirmation by later evidence and ``▲`` now.
    """

    def __init__(self, m: Memory) -> None:
        self.timeline = Timeline(m)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(GUTTER + 20, options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.lines(max(20, options.max_width - GUTTER - 1))

    def _x(self, at: float, start: float, end: float, width: int) -> int:
        return max(0, min(width - 1, int((at - start) / (end - start) * width)))

    def lines(self, width: int) -> Iterator[Text]:
        t = self.timeline
        start = t.updated
        end = max(t.dormant + 0.3 * (t.dormant - t.confirmed), t.now + 0.05 * (t.now - start))
        end = max(end, start + DAY_MS)
        levels = []
        for c in range(width):
            at = start + (c + 0.5) / width * (end - start)
            share = (t.freshness(at) - t.floor) / (1 - t.floor)
            levels.append(round(share * ROWS * 8))
        marks = {
            self._x(t.aging, start, end, width): "◐",
            self._x(t.dormant, start, end, width): "○",
        }
        if t.reinforced:
            marks[self._x(t.confirmed, start, end, width)] = "↻"
        now_x = self._x(t.now, start, end, width)
        guide = Style(dim=True)
        for row in range(ROWS - 1, -1, -1):
            label = "1.00 ┤" if row == ROWS - 1 else f"{t.floor:.2f} ┤" if row == 0 else "     │"
            line = Text(label, style=guide, no_wrap=True, overflow="crop")
            for c, level in enumerate(levels):
                filled = max(0, min(8, level - row * 8))
                if filled:
                    line.append(_EIGHTHS[filled])
                elif c in marks and marks[c] != "↻":
                    line.append("┊", style=guide)
                else:
                    line.append(" ")
            yield line
        axis = Text("     └", style=guide, no_wrap=True, overflow="crop")
        for c in range(width):
            if c == now_x:
                axis.append("▲", style="bold")
            elif c in marks:
                axis.append(marks[c], style="bold")
            else:
                axis.append("─", style=guide)
        yield axis
        keys = ("↻ confirmed  " if t.reinforced else "") + "◐ aging  ○ dormant  ▲ now"
        since = f"from {day(start)}"
        room = GUTTER + width - len(keys)
        head = f"{'':{GUTTER}}{since}" if room - GUTTER >= len(since) + 2 else ""
        yield Text(f"{head:<{max(0, room)}}{keys}", style=guide, no_wrap=True, overflow="crop")
