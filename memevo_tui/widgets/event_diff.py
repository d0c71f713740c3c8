"""One event's records, before and after, side by side, with changed fields marked."""

from __future__ import annotations

import json
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store import CorruptRow

from ..core.text import visible
from .event_list import BatchRow, HistoryRow, event_text, verb

Pair = tuple[dict[str, Any] | None, dict[str, Any] | None]


BREAK_AFTER = frozenset(" /,-_.:;=&?")
"""Where a long value may wrap: after a space or punctuation, never inside a word."""


def _pieces(text: str) -> list[str]:
    pieces, start = [], 0
    for i, ch in enumerate(text):
        if ch in BREAK_AFTER:
            pieces.append(text[start : i + 1])
            start = i + 1
    if start < len(text):
        pieces.append(text[start:])
    return pieces


class Wrapped:
    """Plain text that wraps at spaces and punctuation (a path, an id, JSON), folding
    only a piece longer than the whole line. Rich would cut ``websho / p``."""

    def __init__(self, text: str, style: str = "") -> None:
        self.text = text
        self.style = style

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        lines = self.text.split("\n")
        longest = max((cell_len(p) for line in lines for p in _pieces(line)), default=1)
        widest = max((cell_len(line) for line in lines), default=1)
        return Measurement(min(longest, 24), widest)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(1, options.max_width)
        for line in self.text.split("\n"):
            current = ""
            for piece in _pieces(line) or [""]:
                while cell_len(piece) > width:  # one piece wider than the line: fold it
                    if current:
                        yield Text(current, style=self.style)
                        current = ""
                    yield Text(piece[:width], style=self.style)
                    piece = piece[width:]
                if cell_len(current + piece.rstrip()) > width:
                    yield Text(current.rstrip(), style=self.style)
                    current = ""
                current += piece
            yield Text(current.rstrip(), style=self.style)


def _value(record: dict[str, Any] | None, key: str) -> str:
    if record is None:
        return "(did not exist)" if key == "id" else ""
    if key not in record:
        return "–"
    value = record[key]
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def diff_table(
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    titles: tuple[str, str],
    *,
    all_fields: bool = True,
) -> tuple[Table, int]:
    """Field by field, changed ones marked ``•`` and bold (unchanged ones dim, or left
    out unless ``all_fields``); the table and how many fields it left out."""
    table = Table(expand=True, show_lines=False, box=None, padding=(0, 1))
    table.add_column("", width=1, no_wrap=True)
    table.add_column("field", no_wrap=True, style="bold")
    table.add_column(titles[0], ratio=1)
    table.add_column(titles[1], ratio=1)
    keys: list[str] = []
    for record in (before, after):
        for key in record or {}:
            if key not in keys:
                keys.append(key)
    hidden = 0
    for key in keys:
        old, new = _value(before, key), _value(after, key)
        changed = old != new
        if not (changed or all_fields or before is None):
            hidden += 1
            continue
        style = "bold" if changed else "dim"
        table.add_row(
            Text("•" if changed else " ", style="bold"),
            Text(key),
            Wrapped(visible(old, keep_newlines=True), style),
            Wrapped(visible(new, keep_newlines=True), style + (" reverse" if changed else "")),
        )
    return table, hidden


def describe_batch(row: BatchRow) -> RenderableType:
    head = Text()
    head.append(f"{row.batch.at}  one bulk action: {row.batch.verb}", style="bold")
    batch = row.batch
    if batch.cut_short:
        head.append(
            f"\ncut short: it wrote {len(batch.events)} of its {batch.planned} records before "
            "it stopped (the app was killed or the machine went down)",
            style="bold yellow",
        )
    head.append(
        f"\n{len(row.events)} events, one per record (enter lists them; u undoes them all)\n"
    )
    for e in row.events:
        head.append(f"\n  {e.at[11:19]}  {verb(e):<10} ", style="dim")
        head.append(event_text(e))
    return head


def describe_event(row: HistoryRow | None, all_fields: bool = False) -> RenderableType:
    if row is None:
        return Text("No event selected.", style="italic")
    if isinstance(row, BatchRow):
        return describe_batch(row)
    if isinstance(row, CorruptRow):
        text = Text()
        text.append("Corrupt event ", style="bold")
        text.append(visible(row.id))
        text.append(f"\n{row.reason}\n\n", style="italic")
        text.append(visible(row.raw[:4000], keep_newlines=True))
        return text
    head = Text()
    head.append(f"{row.at}  {row.actor}  ", style="bold")
    head.append(visible(row.reason))
    head.append(f"\nevent {row.id} in ")
    head.append(visible(row.scope))
    parts: list[RenderableType] = [head]
    if not row.after:
        parts.append(Text("\nThis event changed no record.", style="italic"))
    hidden = 0
    for before, after in zip(row.before, row.after, strict=False):
        parts.append(Text(f"\nrecord {visible(str(after.get('id', '?')))}", style="bold underline"))
        table, left_out = diff_table(before, after, ("before", "after"), all_fields=all_fields)
        parts.append(table)
        hidden += left_out
    if hidden:
        parts.append(Text(f"{hidden} unchanged field(s) not shown: f shows them", style="dim"))
    return Group(*parts)


def describe_undo(
    plan: list[tuple[dict[str, Any], dict[str, Any]]] | str | None,
    all_fields: bool = False,
    *,
    in_pane: bool = True,
) -> RenderableType:
    """What undoing an event would write (``in_pane``: under the event in History, where
    u undoes it; else in the dialog that asks)."""
    if plan is None:
        return Text("")
    gap = "\n" if in_pane else ""
    if isinstance(plan, str):
        text = Text(f"{gap}Undo would be refused: ", style="bold")
        text.append(plan, style="italic")
        return text
    heading = "Undo would write (u to undo):" if in_pane else "Undo would write:"
    parts: list[RenderableType] = [Text(f"{gap}{heading}", style="bold")]
    for current, restored in plan:
        parts.append(diff_table(current, restored, ("now", "after undo"), all_fields=all_fields)[0])
    return Group(*parts)


class EventDiff(VerticalScroll, can_focus=True):
    """The selected event, and what undoing it would do."""

    def compose(self) -> ComposeResult:
        yield Static(id="event-diff-body")
        yield Static(id="event-undo-preview")

    body: RenderableType = ""
    """What the pane shows for the selected event."""
    shown: HistoryRow | None = None
    """The event (or bulk action) it shows."""
    all_fields = False
    """Show unchanged fields too (f)."""
    _plan: list[tuple[dict[str, Any], dict[str, Any]]] | str | None = None

    def show(self, row: HistoryRow | None) -> None:
        self.shown, self._plan = row, None
        self.body = describe_event(row, self.all_fields)
        self.query_one("#event-diff-body", Static).update(self.body)
        self.query_one("#event-undo-preview", Static).update("")
        self.scroll_home(animate=False)

    def show_undo(self, plan: list[tuple[dict[str, Any], dict[str, Any]]] | str | None) -> None:
        self._plan = plan
        self.query_one("#event-undo-preview", Static).update(describe_undo(plan, self.all_fields))

    def toggle_fields(self) -> None:
        self.all_fields = not self.all_fields
        self.body = describe_event(self.shown, self.all_fields)
        self.query_one("#event-diff-body", Static).update(self.body)
        self.query_one("#event-undo-preview", Static).update(
            describe_undo(self._plan, self.all_fields)
        )
