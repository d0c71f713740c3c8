"""Marks: which records of the Memories view a bulk action will write.

``space`` marks a record, ``v`` marks every row the cursor passes, ``ctrl+a``
marks what the filter shows, ``esc`` drops the marks. With marks set, the
curation keys act on every marked record after one preview: the view hands the
marks to the Curator (``curator.Curator.bulk``), which writes each record with the
very operation a single key performs. This module only keeps the marks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.binding import Binding, BindingType

from store import Memory

from ..core.state import DashboardState, Row
from ..widgets.memory_list import MemoryList
from ..widgets.messages import StatusChanged
from .base import BaseView


class MarkingView(BaseView):
    """A view with a memory list whose records can be marked and curated together."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "space",
            "mark",
            "Mark",
            id="memory.mark",
            tooltip="Mark or unmark the record; with marks, p 1-4 d r A act on every mark",
        ),
        Binding(
            "v",
            "range",
            "Range",
            id="memory.range",
            show=False,
            tooltip="Start or end a range: every row the cursor passes is marked",
        ),
        Binding(
            "ctrl+a",
            "mark_all",
            "Mark all",
            id="memory.mark_all",
            show=False,
            tooltip="Mark every record the filter shows",
        ),
    ]

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(state, id=id)
        self.marks: dict[str, int] = {}
        """Marked record ids, and the revision each had when marked."""
        self._range: tuple[dict[str, int], list[str]] | None = None
        """A range being marked: the marks before it, and the records the cursor has
        passed since, in order (moving back over them unmarks them again)."""
        self.arrived: set[str] = set()
        """Records that arrived (pi wrote them) since marking began: never marked but
        by hand, and counted in a bulk action's preview."""
        self.said_new_above = False
        """The status line counts records new above the cursor (until it reaches them)."""

    @property
    def memory_list(self) -> MemoryList:
        return self.query_one("#memory-list", MemoryList)

    def _show_marks(self) -> None:
        self.memory_list.show_marks(frozenset(self.marks))
        self.post_message(StatusChanged())

    def mark_parts(self) -> list[str]:
        if not self.marks:
            return []
        shown = self.memory_list.index_of
        hidden = sum(1 for memory_id in self.marks if shown(memory_id) is None)
        range_ = " (range: v ends it)" if self._range is not None else ""
        return [f"{len(self.marks)} marked{f', {hidden} hidden by the filter' if hidden else ''}"
                f"{range_}"]  # fmt: skip

    def action_mark(self) -> None:
        row = self.memory_list.highlighted
        if not isinstance(row, Memory):
            self.notify("Only a record can be marked", severity="warning")
            return
        if row.id in self.marks:
            del self.marks[row.id]
        else:
            self.marks[row.id] = row.revision
        self._show_marks()

    def action_range(self) -> None:
        if self._range is None:
            row = self.memory_list.highlighted
            passed = [row.id] if isinstance(row, Memory) and row.id not in self.arrived else []
            self._range = (dict(self.marks), passed)
            self._extend_range()
            self.notify("Range: the rows the cursor passes are marked; v ends it, esc drops it")
        else:
            self._range = None
            self._show_marks()

    def _pass(self, row: Row | None) -> None:
        """The cursor moved to ``row``: the records it passed on the way join the range;
        back onto one it passed, the range shrinks to there. Held by id, so a record that
        arrives or moves meanwhile is never swept in by its position."""
        if self._range is None or row is None:
            return
        _, passed = self._range
        if row.id in passed:
            del passed[passed.index(row.id) + 1 :]
            return
        index_of = self.memory_list.index_of
        rows = self.memory_list.rows
        here = index_of(row.id)
        there = index_of(passed[-1]) if passed else None
        between: Sequence[Row] = ()
        if here is not None and there is not None:
            low, high = sorted((here, there))
            between = rows[low + 1 : high] if here > there else rows[low + 1 : high][::-1]
        taken = set(passed)
        for r in (*between, row):
            if isinstance(r, Memory) and r.id not in self.arrived and r.id not in taken:
                passed.append(r.id)
                taken.add(r.id)

    def _extend_range(self) -> None:
        if self._range is None:
            return
        base, passed = self._range
        revision = {r.id: r.revision for r in map(self.state.find, passed) if isinstance(r, Memory)}
        self.marks = {**base, **{i: revision[i] for i in passed if i in revision}}
        self._show_marks()

    def on_memory_list_highlighted(self, message: MemoryList.Highlighted) -> None:
        if self.memory_list.new_above == 0 and self.said_new_above:
            self.said_new_above = False
            self.post_message(StatusChanged())  # the cursor reached the records new above
        if self._range is not None:
            self._pass(self.memory_list.highlighted)
            self._extend_range()

    def note_arrivals(self, ids: frozenset[str]) -> None:
        """Records pi just wrote: while marks exist they are kept out of any range."""
        if self.marks or self._range is not None:
            self.arrived |= ids

    def action_mark_all(self) -> None:
        rows = [r for r in self.memory_list.rows if isinstance(r, Memory)]
        self.marks = {**self.marks, **{r.id: r.revision for r in rows}}
        self._show_marks()
        self.notify(f"{len(self.marks)} marked")

    def drop_marks(self) -> bool:
        """Forget every mark (esc); False when there was none."""
        if not self.marks and self._range is None:
            return False
        self.clear_marks()
        self.notify("Marks cleared")
        return True

    def clear_marks(self) -> None:
        """Forget every mark (a bulk action on them was written)."""
        self.marks, self._range = {}, None
        self.arrived.clear()
        self._show_marks()
