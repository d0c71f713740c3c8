"""The review queue's list: one item per line, most urgent first, with the reason it is there."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message

from store import Memory

from ..core.glyphs import KIND_CODES, STATE_GLYPHS
from ..core.review import URGENT, Item
from ..core.text import one_line
from ..core.verbs import DECISIONS
from ..core.view import origin_name
from .memory_list import (
    CURATION_BINDINGS,
    MENU_BINDING,
    PROVENANCE_BINDING,
    PURGE_BINDING,
    MemoryList,
    ask_menu,
)
from .messages import PurgeAsked, ShowProvenance, ShowRecord
from .virtual_list import Column, VirtualList


def review_cells(item: Item, side: int = 0) -> dict[str, str]:
    m = item.records[min(side, len(item.records) - 1)]
    text = one_line(m.content)
    if len(item.records) == 2:
        other = item.records[1 - min(side, 1)]
        text = f"{text}  ≠  {one_line(other.content)}"
    return {
        "reason": item.reason,
        "state": STATE_GLYPHS[m.state],
        "kind": KIND_CODES.get(m.kind, "?"),
        "origin": one_line(origin_name(m.scope)),
        "text": text,
    }


class ReviewList(VirtualList[Item]):
    """Items, most urgent first; one key decides on the highlighted record and moves on."""

    WRITES = frozenset({"curate"})
    COLUMNS = (
        Column("reason", "REASON", 14),
        Column("state", "", 1),
        Column("kind", "K", 1),
        Column("origin", "ORIGIN", 8),
        Column("text", "RECORD", 0),
    )
    DROP_ORDER = ("origin", "kind")
    CLASS_PREFIX = "review-list"
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "review-list--header",
        "review-list--cursor",
        "review-list--empty",
        "review-list--urgent",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        *(b for b in CURATION_BINDINGS if b.id in DECISIONS),
        PROVENANCE_BINDING,
        PURGE_BINDING,
        MENU_BINDING,
        Binding(
            "K",
            "keep",
            "Keep",
            id="review.keep",
            tooltip="Keep it as it is: the item leaves the queue until the record changes",
        ),
        Binding(
            "o",
            "other",
            "Other",
            id="review.other",
            show=False,
            tooltip="In a pair, act on the other record",
        ),
        Binding(
            "enter",
            "goto",
            "Show in list",
            id="review.goto",
            tooltip="Show the record in the memory list",
        ),
    ]

    class Highlighted(VirtualList.Highlighted):
        """The highlighted item changed."""

    class Kept(Message):
        """Keep this item as it is."""

        def __init__(self, review_list: ReviewList, item: Item) -> None:
            super().__init__()
            self.review_list = review_list
            self.item = item

        @property
        def control(self) -> ReviewList:
            return self.review_list

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.side = 0
        """Which record of a pair the keys act on."""
        self.empty_text = "Nothing needs you: the queue is empty."

    def row_key(self, row: Item) -> str:
        return row.key

    def cells(self, row: Item) -> dict[str, str]:
        return review_cells(row, self.side if row is self.highlighted else 0)

    def cell_class(self, row: Item, column: str) -> str | None:
        if column == "state":
            return None
        return "urgent" if column == "reason" and row.reason in URGENT else None

    def make_highlighted(self, row: Item | None) -> ReviewList.Highlighted:
        self.side = 0
        return self.Highlighted(self, row)

    def yank_text(self, row: Item, long: bool) -> tuple[str, str] | None:
        m = self.record(row)
        return (m.content, "its text") if long else (m.id, "its id")

    def record(self, item: Item) -> Memory:
        return item.records[min(self.side, len(item.records) - 1)]

    def action_curate(self, verb: str) -> None:
        item = self.highlighted
        if item is None:
            self.notify("Nothing to review", severity="warning")
            return
        self.post_message(MemoryList.CurationRequested(self, self.record(item), verb, item.records))

    def action_provenance(self) -> None:
        item = self.highlighted
        if item is not None:
            self.post_message(ShowProvenance(self.record(item).id))

    def action_purge(self) -> None:
        item = self.highlighted
        if item is not None:
            self.post_message(PurgeAsked(self.record(item).id))

    def action_menu(self) -> None:
        item = self.highlighted
        ask_menu(self, None if item is None else self.record(item))

    def action_keep(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.Kept(self, self.highlighted))

    def action_other(self) -> None:
        item = self.highlighted
        if item is not None and len(item.records) == 2:
            self.face(1 - self.side)

    def face(self, side: int) -> None:
        """Act on record ``side`` of the highlighted item (0, or 1 in a pair)."""
        item = self.highlighted
        if item is not None and side != self.side and side < len(item.records):
            self.side = side
            self.redraw()
            self.post_message(self.Highlighted(self, item))

    def action_goto(self) -> None:
        item = self.highlighted
        if item is not None:
            self.post_message(ShowRecord(self.record(item).id, "w returns to the review queue"))
