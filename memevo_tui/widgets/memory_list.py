"""The memory list: a virtual list that renders only the lines on screen.

Rows are typed records (or corrupt-row reports) held in a plain list; nothing
is measured up front, so 100,000 rows cost no more to show than 100.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import PurePosixPath

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from store import CorruptRow, Memory
from store._js import iso, parse_ms

from ..glyphs import KIND_LABELS, STATE_GLYPHS, freshness_bar, state_of
from ..text import one_line

Row = Memory | CorruptRow


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    title: str
    width: int


COLUMNS: tuple[Column, ...] = (
    Column("pin", "", 1),
    Column("kind", "KIND", 8),
    Column("status", "STATUS", 11),
    Column("fresh", "FRESH", 5),
    Column("state", "STATE", 12),
    Column("origin", "ORIGIN", 12),
    Column("updated", "UPDATED", 10),
    Column("content", "CONTENT", 0),
)


# Columns dropped first when the pane is narrow, so the content keeps room.
DROP_ORDER = ("status", "origin", "updated", "kind")
MIN_CONTENT = 24


def visible_columns(width: int) -> tuple[Column, ...]:
    """The columns that fit ``width`` while leaving the content at least MIN_CONTENT cells."""
    columns = list(COLUMNS)
    for key in DROP_ORDER:
        fixed = sum(c.width + 1 for c in columns if c.width)
        if width - fixed >= MIN_CONTENT:
            break
        columns = [c for c in columns if c.key != key]
    return tuple(columns)


def _date(value: str | None) -> str:
    ms = parse_ms(value)
    return iso(ms)[:10] if ms is not None else ""


def _origin(scope: str) -> str:
    return PurePosixPath(scope).name or scope


def cells(row: Row) -> dict[str, str]:
    """The text of each column for one row (all plain, all visible)."""
    if isinstance(row, CorruptRow):
        return {
            "pin": " ",
            "kind": "?",
            "status": "corrupt",
            "fresh": "",
            "state": f"{STATE_GLYPHS['corrupt']} corrupt",
            "origin": "",
            "updated": "",
            "content": f"{one_line(row.id)}: {row.reason}",
        }
    return {
        "pin": STATE_GLYPHS["pinned"] if row.pinned else " ",
        "kind": KIND_LABELS.get(row.kind, row.kind),
        "status": row.status,
        "fresh": freshness_bar(row.quality.freshness),
        "state": f"{STATE_GLYPHS[row.state]} {row.state}",
        "origin": one_line(_origin(row.scope)),
        "updated": _date(row.updated_at),
        "content": one_line(row.content),
    }


def _fit(text: str, width: int) -> str:
    """Exactly ``width`` cells: clipped with an ellipsis, or padded."""
    if cell_len(text) > width:
        return set_cell_size(text, max(0, width - 1)) + "…" if width else ""
    return set_cell_size(text, width)


class MemoryList(ScrollView, can_focus=True):
    """Every memory, one line each, with a sticky header line."""

    COMPONENT_CLASSES = {
        "memory-list--header",
        "memory-list--cursor",
        "memory-list--fresh",
        "memory-list--aging",
        "memory-list--dormant",
        "memory-list--pinned",
        "memory-list--forgotten",
        "memory-list--conflicted",
        "memory-list--disputed",
        "memory-list--corrupt",
        "memory-list--bar-high",
        "memory-list--bar-mid",
        "memory-list--bar-low",
    }

    BINDINGS = [
        Binding("down,j", "cursor_down", "Down", show=False, id="list.down"),
        Binding("up,k", "cursor_up", "Up", show=False, id="list.up"),
        Binding("g,home", "first", "First", show=False, id="list.first"),
        Binding("G,end", "last", "Last", show=False, id="list.last"),
        Binding("pagedown", "page_down", "Page down", show=False, id="list.page_down"),
        Binding("pageup", "page_up", "Page up", show=False, id="list.page_up"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)
    """Index of the highlighted row."""

    class Highlighted(Message):
        """The highlighted row changed."""

        def __init__(self, memory_list: MemoryList, row: Row | None) -> None:
            super().__init__()
            self.memory_list = memory_list
            self.row = row

        @property
        def control(self) -> MemoryList:
            return self.memory_list

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.rows: list[Row] = []
        self._cache: OrderedDict[tuple[int, int, bool], Strip] = OrderedDict()

    # ---------------------------------------------------------------- data

    def set_rows(self, rows: list[Row], keep_id: str | None = None) -> None:
        """Replace the rows; the cursor stays on ``keep_id`` (or the same index)."""
        current = self.highlighted
        keep = keep_id if keep_id is not None else (current.id if current else None)
        self.rows = rows
        self._cache.clear()
        self.virtual_size = Size(0, len(rows) + 1)
        index = self.cursor
        if keep is not None:
            index = next((i for i, r in enumerate(rows) if r.id == keep), index)
        self.cursor = max(0, min(index, len(rows) - 1))
        self.refresh()

    @property
    def highlighted(self) -> Row | None:
        if 0 <= self.cursor < len(self.rows):
            return self.rows[self.cursor]
        return None

    def watch_cursor(self, old: int, new: int) -> None:
        self._cache.pop((old, self.scrollable_content_region.width, True), None)
        self._cache.pop((new, self.scrollable_content_region.width, True), None)
        self.scroll_to_cursor()
        self.refresh()
        self.post_message(self.Highlighted(self, self.highlighted))

    def scroll_to_cursor(self) -> None:
        body = max(1, self.size.height - 1)
        top = int(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + body:
            self.scroll_to(y=self.cursor - body + 1, animate=False)

    # ------------------------------------------------------------ actions

    def _move(self, delta: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))

    def action_cursor_down(self) -> None:
        self._move(1)

    def action_cursor_up(self) -> None:
        self._move(-1)

    def action_page_down(self) -> None:
        self._move(max(1, self.size.height - 2))

    def action_page_up(self) -> None:
        self._move(-max(1, self.size.height - 2))

    def action_first(self) -> None:
        self._move(-len(self.rows))

    def action_last(self) -> None:
        self._move(len(self.rows))

    async def _on_click(self, event: object) -> None:
        y = getattr(event, "y", None)
        if isinstance(y, int) and y >= 1:
            index = int(self.scroll_offset.y) + y - 1
            if 0 <= index < len(self.rows):
                self.cursor = index

    # ------------------------------------------------------------ drawing

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"memory-list--{name}", partial=True)

    def _bar_style(self, freshness: float) -> Style:
        level = "high" if freshness >= 0.85 else "mid" if freshness >= 0.65 else "low"
        return self._style(f"bar-{level}")

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if y == 0:
            return self._header(width)
        index = int(self.scroll_offset.y) + y - 1
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        key = (index, width, index == self.cursor)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._render_row(self.rows[index], width, index == self.cursor)
            self._cache[key] = strip
            if len(self._cache) > 512:
                self._cache.popitem(last=False)
        return strip

    def _header(self, width: int) -> Strip:
        style = self.rich_style + self._style("header")
        segments = []
        used = 0
        for col in visible_columns(width):
            w = col.width or max(0, width - used)
            segments.append(Segment(_fit(col.title, w) + (" " if col.width else ""), style))
            used += w + 1
        return Strip(segments).adjust_cell_length(width, style)

    def _render_row(self, row: Row, width: int, is_cursor: bool) -> Strip:
        base = self.rich_style
        state = state_of(row)
        state_style = self._style(state)
        if is_cursor:
            base = base + self._style("cursor")
        text = cells(row)
        segments: list[Segment] = []
        used = 0
        for col in visible_columns(width):
            w = col.width or max(0, width - used)
            value = _fit(text[col.key], w)
            style = base
            if col.key in ("state", "pin", "status"):
                style = base + state_style
            elif col.key == "fresh" and isinstance(row, Memory):
                style = base + self._bar_style(row.quality.freshness)
            elif col.key == "content" and state in ("forgotten", "conflicted", "corrupt"):
                style = base + state_style
            segments.append(Segment(value, style))
            if col.width:
                segments.append(Segment(" ", base))
            used += w + 1
        return Strip(segments).adjust_cell_length(width, base)

    def on_resize(self) -> None:
        self._cache.clear()
