"""A keyboard-driven list that renders only the lines on screen (Textual's line API).

Subclasses name their columns and say how a row reads and looks; this base keeps the
cursor, scrolling, a sticky header and a small cache of drawn lines: a list of 100,000
rows costs what the visible 40 cost."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..core.text import one_line
from .columns import Column, column_at, fit, fitting, header_strip, resolved_style, row_strip
from .list_message import ListMessage
from .positions import Positions

__all__ = ["Column", "VirtualList", "fit"]

T = TypeVar("T")


class VirtualList(ScrollView, Generic[T], can_focus=True):
    """Rows of ``T``, one line each, under a sticky header line."""

    COLUMNS: ClassVar[tuple[Column, ...]] = ()
    DROP_ORDER: ClassVar[tuple[str, ...]] = ()
    MIN_FLEX = 24
    CLASS_PREFIX: ClassVar[str] = "virtual-list"
    WRITES: ClassVar[frozenset[str]] = frozenset()
    """The actions whose keys write to the store: greyed out while ``writes_off``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down,j", "cursor_down", "Down", show=False, id="list.down", tooltip="Next row"),
        Binding("up,k", "cursor_up", "Up", show=False, id="list.up", tooltip="Previous row"),
        Binding("g,home", "first", "First", show=False, id="list.first", tooltip="First row"),
        Binding("G,end", "last", "Last", show=False, id="list.last", tooltip="Last row"),
        Binding("pagedown,ctrl+d", "page_down", "Page down", show=False, id="list.page_down",
                tooltip="Page down"),
        Binding("pageup,ctrl+u", "page_up", "Page up", show=False, id="list.page_up",
                tooltip="Page up"),
        Binding("y", "yank(False)", "Copy id", show=False, id="list.copy",
                tooltip="Copy the highlighted row's id (to the clipboard, over SSH too)"),
        Binding("Y", "yank(True)", "Copy text", show=False, id="list.copy_text",
                tooltip="Copy the highlighted row's text"),
    ]  # fmt: skip

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)
    """Index of the highlighted row."""

    class Highlighted(ListMessage):
        """The highlighted row changed (None when the list is empty)."""

        def __init__(self, source: VirtualList[Any], row: Any) -> None:
            super().__init__(source)
            self.row = row

    class HeaderClicked(ListMessage):
        """A column title was clicked."""

        def __init__(self, source: VirtualList[Any], column: str) -> None:
            super().__init__(source)
            self.column = column

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.rows: list[T] = []
        self._anchor: str | None = None
        """The row a filter being typed started from ("": none), or None."""
        self.sort_key: str | None = None
        self.sort_descending = True
        self.empty_text = "Nothing to show."
        self._cache: OrderedDict[tuple[int, int, bool], Strip] = OrderedDict()
        self._styles_memo: dict[str, Style] = {}
        self._flashing: set[str] = set()
        self._where: Positions[T] = Positions(self.row_key)
        """Where each row is, kept through insertions and removals."""
        self.new_above = 0
        """Rows that arrived above the cursor since it was last on the first row (a log
        read newest first: the view says how many, as a log viewer does)."""
        self.writes_off = False
        """The dashboard writes nothing now (the time dial is away from now)."""

    # ---------------------------------------------------------------- subclass API

    def row_key(self, row: T) -> str:
        raise NotImplementedError

    def cells(self, row: T) -> dict[str, str]:
        raise NotImplementedError

    def row_class(self, row: T) -> str | None:
        """A component-class suffix styling the whole row, or None."""
        return None

    def cell_class(self, row: T, column: str) -> str | None:
        """A component-class suffix for one cell, or None."""
        return None

    def make_highlighted(self, row: T | None) -> Message:
        return self.Highlighted(self, row)

    def yank_text(self, row: T, long: bool) -> tuple[str, str] | None:
        """What ``y`` (``long``: ``Y``) copies of a row, and its name; None: nothing."""
        return None if long else (self.row_key(row), "its id")

    class WriteRefused(Message):
        """A write key was pressed while writes are off (it is greyed out): the screen
        says why."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A key that would write is greyed out in the footer while writes are off."""
        if self.writes_off and action in self.WRITES:
            return None
        return True

    def on_key(self, event: events.Key) -> None:
        # Textual skips a greyed-out binding in silence: the key is seen here first.
        if not self.writes_off:
            return
        active = self.screen.active_bindings.get(event.key)
        if active is not None and active.node is self and not active.enabled:
            if active.binding.action.split("(", 1)[0] in self.WRITES:
                self.post_message(self.WriteRefused())

    def set_writes_off(self, off: bool) -> None:
        if off != self.writes_off:
            self.writes_off = off
            self.refresh_bindings()

    # ---------------------------------------------------------------- data

    def hold_anchor(self) -> None:
        """A filter is being typed: until ``drop_anchor``, each new set of rows puts the
        cursor on the row highlighted now, or on the first row when it is not shown (so
        where it ends depends on the filter, not on when the typist paused)."""
        current = self.highlighted
        self._anchor = self.row_key(current) if current is not None else ""

    def drop_anchor(self) -> None:
        self._anchor = None

    def set_rows(
        self,
        rows: Sequence[T],
        keep: str | None = None,
        *,
        top: bool = False,
        fresh: Collection[str] = (),
    ) -> None:
        """Replace the rows; the cursor stays on the row with key ``keep`` (default:
        the highlighted one), else on the same index; with ``top``, it goes to the first.
        While an anchor is held, the anchor's row is kept, else the first row. ``fresh``:
        the keys of rows new to the store; those above the cursor add to ``new_above``."""
        current = self.highlighted
        was_at, scrolled = self.cursor, round(self.scroll_offset.y)
        anchor = self._anchor
        if keep is None and anchor is not None:
            keep, top = anchor, top or not anchor
        keep_key = keep if keep is not None else (self.row_key(current) if current else None)
        self.rows = list(rows)
        self._where.forget()
        self._cache.clear()
        self.virtual_size = Size(0, len(self.rows) + 1)
        index = 0 if top or anchor is not None else self.cursor
        if keep_key is not None and not top:
            found = self.index_of(keep_key)
            index = index if found is None else found
        self.cursor = max(0, min(index, len(self.rows) - 1))
        if fresh and self.cursor:
            row_key = self.row_key
            self.new_above += sum(1 for r in self.rows[: self.cursor] if row_key(r) in fresh)
            if self.cursor > was_at and self.new_above:  # rows came in above it: the
                self.hold_still(scrolled + self.cursor - was_at)  # view stays as it was
        self.refresh()

    def hold_still(self, y: int) -> None:
        """Scroll to line ``y`` at once: rows that came in above the cursor leave what is
        on screen where it was (the status line counts them, as a log viewer does)."""
        self.scroll_to(y=y, animate=False, immediate=True)
        self.scroll_to_cursor()

    def index_of(self, key: str) -> int | None:
        """The position of the row with this key, or None."""
        return self._where.index_of(self.rows, key)

    def insert_row(self, index: int, row: T) -> None:
        """Put a new row at ``index``; the cursor stays on its row. A list of 100,000
        rows takes one without numbering them all again."""
        index = max(0, min(index, len(self.rows)))
        top = round(self.scroll_offset.y)
        self.rows.insert(index, row)
        self._where.inserted(index, self.row_key(row))
        self._moved(index, 1)
        if 0 <= index < top <= self.cursor:
            self._held_above()
            return
        if len(self.rows) == 1:
            self.cursor = 0  # the first row: highlighted now
        elif index <= self.cursor:
            self.cursor += 1  # the same row, one lower
        self._shown_moved(index)

    def _held_above(self) -> None:
        """A row came in above the scrolled window: the window and the cursor move down
        with the rows, every line shows what it showed, none is drawn again."""
        top = round(self.scroll_offset.y) + 1
        self.set_reactive(VirtualList.scroll_y, float(top))
        self.set_reactive(VirtualList.scroll_target_y, float(top))
        self.set_reactive(VirtualList.cursor, self.cursor + 1)

    def remove_row(self, index: int) -> None:
        """Take out the row at ``index``; the cursor stays on its row (on the next one
        when it was this one)."""
        if not 0 <= index < len(self.rows):
            return
        self._where.removed(index, self.row_key(self.rows.pop(index)))
        self._moved(index, -1)
        if index < self.cursor:
            self.cursor -= 1
        elif index == self.cursor:
            self.cursor = max(0, min(self.cursor, len(self.rows) - 1))
        self._shown_moved(index)

    def _moved(self, index: int, step: int) -> None:
        # The drawn lines at and below it moved by one: their cache entries with them.
        self._cache = OrderedDict(
            ((i + step if i >= index else i, w, c), strip)
            for (i, w, c), strip in self._cache.items()
            if not (step < 0 and i == index)
        )
        self._set_height(len(self.rows) + 1)

    def _set_height(self, lines: int) -> None:
        """The scrollable height, in lines. While the scroll bar stays, only it is drawn
        again: a new height through ``virtual_size`` lays the whole screen out again,
        and repaints every widget on it, once per row a live change adds."""
        size = Size(0, lines)
        if size == self.virtual_size:
            return
        region = self.scrollable_content_region
        if self.is_mounted and self.show_vertical_scrollbar and lines > region.height:
            self.set_reactive(VirtualList.virtual_size, size)
            self._scroll_update(size)  # the scroll bar's size and the scroll limits
        else:
            self.virtual_size = size

    def _shown_moved(self, index: int) -> None:
        """Draw again what moved on screen (nothing, when it is all below the window)."""
        body = max(1, self.scrollable_content_region.height - 1)
        if index < round(self.scroll_offset.y) + body:
            self.refresh()

    def replace_row(self, key: str, row: T) -> bool:
        """Swap one row in place (same position); True when it was there."""
        i = self.index_of(key)
        if i is None:
            return False
        self.rows[i] = row
        self.redraw_row(i)
        if i == self.cursor:
            self.post_message(self.make_highlighted(row))
        return True

    def redraw_row(self, index: int) -> None:
        """Draw one row again; the other lines stay as they are."""
        for cached in [k for k in self._cache if k[0] == index]:
            del self._cache[cached]
        self.refresh_line(index + 1)  # line 0 is the column titles

    def redraw(self) -> None:
        """Draw every line again (what a row looks like changed, not the rows)."""
        self._cache.clear()
        self.refresh()

    def flash(self, keys: set[str], seconds: float = 1.2) -> None:
        """Mark rows that just changed; they are drawn reversed for ``seconds``."""
        if not keys:
            return
        self._flashing |= keys
        self._redraw_keys(keys)

        def done() -> None:
            self._flashing -= keys
            self._redraw_keys(keys)

        self.set_timer(seconds, done)

    def _redraw_keys(self, keys: set[str]) -> None:
        for key in keys:
            i = self.index_of(key)
            if i is not None:
                self.redraw_row(i)

    @property
    def highlighted(self) -> T | None:
        if 0 <= self.cursor < len(self.rows):
            return self.rows[self.cursor]
        return None

    def watch_cursor(self, old: int, new: int) -> None:
        if new == 0:
            self.new_above = 0  # the newest are in view
        width = self.scrollable_content_region.width
        self._cache.pop((old, width, True), None)
        self._cache.pop((old, width, False), None)
        self._cache.pop((new, width, True), None)
        scrolled_from = self.scroll_offset.y
        self.scroll_to_cursor()
        if self.scroll_offset.y == scrolled_from:  # only the two rows look different
            self.refresh_line(old + 1)
            self.refresh_line(new + 1)
        else:
            self.refresh()
        self.post_message(self.make_highlighted(self.highlighted))

    def scroll_to_cursor(self) -> None:
        body = max(1, self.scrollable_content_region.height - 1)
        top = round(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + body:
            self.scroll_to(y=self.cursor - body + 1, animate=False, immediate=True)

    # ------------------------------------------------------------ actions

    def _move(self, delta: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))

    def action_cursor_down(self) -> None:
        self._move(1)

    def action_cursor_up(self) -> None:
        self._move(-1)

    def action_page_down(self) -> None:
        self._move(max(1, self.scrollable_content_region.height - 2))

    def action_page_up(self) -> None:
        self._move(-max(1, self.scrollable_content_region.height - 2))

    def action_first(self) -> None:
        self._move(-len(self.rows))

    def action_last(self) -> None:
        self._move(len(self.rows))

    def action_yank(self, long: bool) -> None:
        """Copy to the clipboard (OSC 52: works over SSH) and say what was copied."""
        row = self.highlighted
        got = None if row is None else self.yank_text(row, long)
        if got is None:
            self.notify("Nothing to copy here", severity="warning")
            return
        text, what = got
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {what}: {one_line(text, 70)}", title="Copied")

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y == 0:
            columns = self.visible_columns(self.scrollable_content_region.width)
            column = column_at(columns, offset.x)
            if column is not None:
                self.post_message(self.HeaderClicked(self, column))
            return
        index = round(self.scroll_offset.y) + offset.y - 1
        if 0 <= index < len(self.rows):
            self.cursor = index

    # ------------------------------------------------------------ drawing

    def drop_order(self) -> Sequence[str]:
        """The columns a short line drops, the one that says least first."""
        return self.DROP_ORDER

    def visible_columns(self, width: int) -> tuple[Column, ...]:
        """The columns that fit, dropping ``drop_order()`` first to keep MIN_FLEX cells."""
        return fitting(self.COLUMNS, self.drop_order(), width, self.MIN_FLEX)

    def component_style(self, suffix: str) -> Style:
        """A component class's style, its colour resolved as Textual resolves widget
        text: ``auto`` colours contrast with the background and translucent ones are
        blended onto it (a Rich style can do neither, so theme colours such as
        ``$text-muted``, ``auto 60%``, would otherwise come out white on light themes).

        Kept until the styles change, as the drawn lines are (``notify_style_update``)."""
        style = self._styles_memo.get(suffix)
        if style is None:
            style = resolved_style(self, f"{self.CLASS_PREFIX}--{suffix}")
            self._styles_memo[suffix] = style
        return style

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()
        self._styles_memo.clear()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if y == 0:
            return self._header(width)
        index = round(self.scroll_offset.y) + y - 1
        if not self.rows and y == 1:
            style = self.rich_style + self.component_style("empty")
            return Strip([Segment(fit(self.empty_text, width), style)])
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        key = (index, width, index == self.cursor)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._render_row(self.rows[index], width, index == self.cursor)
            self._cache[key] = strip
            if len(self._cache) > 1024:
                self._cache.popitem(last=False)
        return strip

    def _header(self, width: int) -> Strip:
        style = self.rich_style + self.component_style("header")
        columns = self.visible_columns(width)
        return header_strip(columns, width, style, self.sort_key, self.sort_descending)

    def _render_row(self, row: T, width: int, is_cursor: bool) -> Strip:
        base = self.rich_style
        if is_cursor:
            base = base + self.component_style("cursor")
        if self._flashing and self.row_key(row) in self._flashing:
            base = base + Style(reverse=True)
        whole = self.row_class(row)
        columns = self.visible_columns(width)
        classes = {c.key: self.cell_class(row, c.key) or whole for c in columns}
        return row_strip(columns, self.cells(row), width, base, classes, self.component_style)

    def on_resize(self) -> None:
        self._cache.clear()
        # A pane that grows beside or under the list must not hide the cursor's row.
        self.call_after_refresh(self.scroll_to_cursor)
