"""One event's records, before and after, side by side, with changed fields marked."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store import CorruptRow, Event
from store._js import js_json

from ..text import visible

Pair = tuple[dict[str, Any] | None, dict[str, Any] | None]


def _value(record: dict[str, Any] | None, key: str) -> str:
    if record is None:
        return "(did not exist)" if key == "id" else ""
    if key not in record:
        return "–"
    value = record[key]
    return value if isinstance(value, str) else js_json(value)


def diff_table(
    before: dict[str, Any] | None, after: dict[str, Any] | None, titles: tuple[str, str]
) -> Table:
    """Field by field: unchanged fields dim, changed ones marked with ``•`` and bold."""
    table = Table(expand=True, show_lines=False, box=None, padding=(0, 1))
    table.add_column("", width=1, no_wrap=True)
    table.add_column("field", no_wrap=True, style="bold")
    table.add_column(titles[0], ratio=1, overflow="fold")
    table.add_column(titles[1], ratio=1, overflow="fold")
    keys: list[str] = []
    for record in (before, after):
        for key in record or {}:
            if key not in keys:
                keys.append(key)
    for key in keys:
        old, new = _value(before, key), _value(after, key)
        changed = old != new
        style = "bold" if changed else "dim"
        table.add_row(
            Text("•" if changed else " ", style="bold"),
            Text(key),
            Text(visible(old, keep_newlines=True), style=style),
            Text(visible(new, keep_newlines=True), style=style + (" reverse" if changed else "")),
        )
    return table


def describe_event(row: Event | CorruptRow | None) -> RenderableType:
    if row is None:
        return Text("No event selected.", style="italic")
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
    for before, after in zip(row.before, row.after, strict=False):
        parts.append(Text(f"\nrecord {visible(str(after.get('id', '?')))}", style="bold underline"))
        parts.append(diff_table(before, after, ("before", "after")))
    return Group(*parts)


def describe_undo(plan: list[tuple[dict[str, Any], dict[str, Any]]] | str | None) -> RenderableType:
    if plan is None:
        return Text("")
    if isinstance(plan, str):
        text = Text("\nUndo would be refused: ", style="bold")
        text.append(plan, style="italic")
        return text
    parts: list[RenderableType] = [Text("\nUndo would write (u to undo):", style="bold")]
    for current, restored in plan:
        parts.append(diff_table(current, restored, ("now", "after undo")))
    return Group(*parts)


class EventDiff(VerticalScroll, can_focus=True):
    """The selected event, and what undoing it would do."""

    def compose(self) -> ComposeResult:
        yield Static(id="event-diff-body")
        yield Static(id="event-undo-preview")

    body: RenderableType = ""
    """What the pane shows for the selected event."""
    shown: Event | CorruptRow | None = None
    """The event it shows."""

    def show(self, row: Event | CorruptRow | None) -> None:
        self.shown = row
        self.body = describe_event(row)
        self.query_one("#event-diff-body", Static).update(self.body)
        self.query_one("#event-undo-preview", Static).update("")
        self.scroll_home(animate=False)

    def show_undo(self, plan: list[tuple[dict[str, Any], dict[str, Any]]] | str | None) -> None:
        self.query_one("#event-undo-preview", Static).update(describe_undo(plan))
