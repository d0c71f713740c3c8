"""The memory list with its filter box and detail pane, over the shared state's rows.

It owns the list's settings (``view``: the filter, the sort, the hidden-records
setting) and the filter's per-record text cache; it filters and sorts the shared
state's rows by them, puts changed rows in place (keeping the cursor's record),
and keeps the detail pane on the cursor. The Memories view composes it and adds
the keys that change what it shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input

from store import Memory

from ..core.filters import say
from ..core.secrets import purged_note
from ..core.state import DashboardState, Row
from ..core.text import no_match, one_line
from ..core.view import (
    DEFAULT_DESCENDING,
    SortKey,
    View,
    apply_view,
    insertion_point,
    order_view,
    sort_key,
)
from .debounced_input import DebouncedInput
from .filter_box import FilterBox
from .memory_detail import MemoryDetail
from .memory_list import MemoryList
from .split import Split
from .virtual_list import VirtualList

FILTER_DELAY = 0.12
"""Seconds of typing pause before the filter applies."""


class MemoryBrowser(Vertical):
    """Filter box, then the list beside the highlighted record in full."""

    class Changed(Message):
        """What the list shows changed (its count, sort or filter): the status line."""

    def __init__(self, state: DashboardState, *, sorts: Sequence[str]) -> None:
        super().__init__(id="memory-browser")
        self.state = state
        self.sorts = sorts
        self.view = View()
        """The memory list's filter, sort and hidden-record setting."""
        self.haystacks: dict[str, str] = {}
        """Lower-cased filter text per record id, built as the filter needs it."""
        self._keys: dict[str, SortKey] = {}
        """The sort key of each listed record, as it was when it was placed."""
        self._before: tuple[str, bool] | None = None
        """The filter and the hidden-records setting before another view opened
        records here (``open_for``): clearing the filter brings them back."""

    def compose(self) -> ComposeResult:
        yield FilterBox(
            delay=FILTER_DELAY,
            placeholder="/ filter: words, kind:fact state:dormant origin:… is:pinned",
            id="filter",
        )
        with Split(width=30, id="main"):
            yield MemoryList(id="memory-list")
            yield MemoryDetail(id="memory-detail", load_events=self.state.record_events,
                               injected=self.state.injected_line, purged=self._purged)  # fmt: skip

    def _purged(self, memory_id: str, content: str) -> str:
        remembered = self.state.remembered
        return purged_note(memory_id, content, remembered.purges() if remembered else [])

    @property
    def memory_list(self) -> MemoryList:
        return self.query_one(MemoryList)

    @property
    def busy(self) -> bool:
        """True while the filter waits for typing to pause or the pane is behind."""
        detail = self.query_one(MemoryDetail)
        pending = self.query_one(DebouncedInput).pending
        return pending or not detail.caught_up_with(self.memory_list.highlighted)

    def apply(self, *, reloaded: bool = False, top: bool = False) -> None:
        """Filter and sort every row by the list settings, keeping the cursor's record
        (``reloaded``: every row was read again, so the filter's text is built anew;
        ``top``: the cursor goes to the first row instead)."""
        if reloaded:
            self.haystacks.clear()
        rows, parsed, self._keys = order_view(
            self.in_scope(self.state.rows),
            self.view,
            self.haystacks,
            self.state.injection_counts(),
            self.state.injection_last(),
        )
        memory_list = self.memory_list
        memory_list.sort_key = self.view.sort
        memory_list.sort_descending = self.view.descending
        memory_list.empty_text = self._empty_line(parsed.errors)
        memory_list.set_rows(rows, top=top)
        self.query_one(FilterBox).show_error(say(parsed.errors))
        self.post_message(self.Changed())

    def _empty_line(self, errors: Sequence[str]) -> str:
        """What the list says when it shows nothing: why, and how to see more."""
        scope = self.state.scope
        where = "" if scope.everything else f" in {one_line(scope.name)}"
        total = len(self.in_scope(self.state.rows))
        typed = self.view.query.strip()
        if errors:
            return "The filter cannot be read: see the line above."
        if typed:
            return no_match("memory", typed, total, "records", where)
        if not self.state.rows:
            return "The store holds no memory yet: pi writes them as it learns."
        if not total:
            return f"No record{where}: @ picks another project."
        return f"No record to show{where}: forgotten and conflicted ones are hidden (a)."

    def in_scope(self, rows: Sequence[Row]) -> Sequence[Row]:
        """The rows of the project scope (corrupt rows, whose origin is not known, too)."""
        scope = self.state.scope
        if scope.everything:
            return rows
        return [r for r in rows if scope.shows(r)]

    MOVES_AT_ONCE = 256
    """More records than this coming into or leaving the list at once: it is sorted
    again (one pass) rather than told of each."""

    def put(self, rows: Sequence[Row]) -> None:
        """Put changed records in place: the list keeps its order and its cursor. A
        record the filter now shows is put where the sort places it (a binary search),
        one it no longer shows is taken out, and the rest are left where they are."""
        memory_list = self.memory_list
        for r in rows:
            self.haystacks.pop(r.id, None)
        visible_now, _ = apply_view(
            self.in_scope(rows), self.view, self.haystacks, self.state.injection_counts()
        )
        still = {r.id for r in visible_now}
        coming: list[Memory] = []
        leaving: list[int] = []
        for r in rows:
            at = memory_list.index_of(r.id)
            if r.id in still:
                if at is not None:
                    memory_list.replace_row(r.id, r)
                elif isinstance(r, Memory):
                    coming.append(r)
                else:  # a new corrupt row: they are listed first, in their own order
                    self.apply()
                    return
            elif at is not None:
                leaving.append(at)
        if len(coming) + len(leaving) > self.MOVES_AT_ONCE:
            self.apply()
            return
        for at in sorted(leaving, reverse=True):  # bottom up: the others stay put
            self._keys.pop(memory_list.rows[at].id, None)
            memory_list.remove_row(at)
        key = sort_key(self.view.sort, self.state.injection_counts(), self.state.injection_last())
        for m in coming:
            at = insertion_point(memory_list.rows, self._keys, m, self.view, key)
            memory_list.insert_row(at, m)
            self._keys[m.id] = key(m)
        self.post_message(self.Changed())

    def set_view(self, **changes: str | bool) -> None:
        self.view = replace(self.view, **changes)  # type: ignore[arg-type]
        self.apply()

    def sort_by(self, key: str) -> None:
        self.set_view(sort=key, descending=key in DEFAULT_DESCENDING)

    def reverse_sort(self) -> None:
        self.set_view(descending=not self.view.descending)

    def show_query(self, query: str, *, show_hidden: bool) -> None:
        """Filter by ``query`` at once."""
        box = self.query_one(DebouncedInput)
        box.value = query
        box.cancel()
        self.set_view(query=query, show_hidden=show_hidden)

    def open_for(self, query: str) -> None:
        """Another view asks to show records (``query``), forgotten and conflicted ones
        too; the view as it was comes back when the filter is cleared."""
        view = self.view
        if self._before is None:
            self._before = (view.query, view.show_hidden)
        self.show_query(query, show_hidden=True)

    @property
    def opened_for(self) -> bool:
        """Records another view asked for are shown (``open_for``)."""
        return self._before is not None

    def clear_filter(self) -> None:
        """esc: no filter, and the hidden records as they were before another view
        opened records here (else as they are)."""
        before, self._before = self._before, None
        if before is not None and before[0]:
            self.show_query(before[0], show_hidden=before[1])
        else:
            hidden = before[1] if before is not None else self.view.show_hidden
            self.show_query("", show_hidden=hidden)

    def toggle_hidden(self) -> bool:
        """a: show or hide forgotten and conflicted records (the user's own choice now)."""
        self._before = None
        show = not self.view.show_hidden
        self.set_view(show_hidden=show)
        return show

    def reveal(self, memory_id: str) -> str | None:
        """Put the cursor on a record, clearing what hides it; why not, or None."""
        row = self.state.find(memory_id)
        if row is None:
            return f"{memory_id} is no longer in the store"
        memory_list = self.memory_list
        if memory_list.index_of(memory_id) is None:
            if isinstance(row, Memory) and not row.active and not self.view.show_hidden:
                self.open_for("")
            else:
                self.show_query("", show_hidden=self.view.show_hidden)
        index = memory_list.index_of(memory_id)
        if index is None:  # not expected: the list was just opened up to show it
            return f"{memory_id} is not in the memory list"
        memory_list.cursor = index
        return None

    def on_debounced_input_settled(self, event: DebouncedInput.Settled) -> None:
        event.stop()
        if event.stale:  # typed on, or submitted, since
            return
        self.set_view(query=event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.set_view(query=event.value)
        self.screen.set_focus(self.memory_list)

    def on_virtual_list_header_clicked(self, message: VirtualList.HeaderClicked) -> None:
        message.stop()
        if message.column not in self.sorts:
            return
        if message.column == self.view.sort:
            self.reverse_sort()
        else:
            self.sort_by(message.column)

    def on_memory_list_highlighted(self, message: MemoryList.Highlighted) -> None:
        self.query_one(MemoryDetail).follow(message.row)  # the view hears of it too
