"""The memory list: every record on one line, colour-coded and glyph-coded by state."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message

from store import CorruptRow, Memory

from ..glyphs import KIND_LABELS, STATE_GLYPHS, freshness_bar, state_of
from ..text import iso_day, one_line
from ..view import origin_name
from .virtual_list import Column, VirtualList

Row = Memory | CorruptRow

EVIDENCE_LABELS = {
    "manual_correction": "manual",
    "user_statement": "user",
    "tool_observation": "tool",
    "summary": "summary",
    "unknown": "?",
}
VERDICT_GLYPHS = {"useful": "+", "unhelpful": "-", "accurate": "✓", "incorrect": "✗"}


def memory_cells(row: Row) -> dict[str, str]:
    """The text of each column for one row (all plain, all visible)."""
    if isinstance(row, CorruptRow):
        return {
            "kind": "?",
            "status": "corrupt",
            "state": f"{STATE_GLYPHS['corrupt']} corrupt",
            "content": f"{one_line(row.id)}: {row.reason}",
        }
    q = row.quality
    confirmed = ""
    if q.confirmed_at[:10] > row.updated_at[:10]:
        confirmed = "↻" + q.confirmed_at[5:10]
    feedback = (VERDICT_GLYPHS[row.utility.verdict] if row.utility else "·") + (
        VERDICT_GLYPHS[row.accuracy.verdict] if row.accuracy else "·"
    )
    return {
        "pin": STATE_GLYPHS["pinned"] if row.pinned else "",
        "kind": KIND_LABELS.get(row.kind, row.kind),
        "status": row.status,
        "fresh": freshness_bar(q.freshness),
        "state": f"{STATE_GLYPHS[row.state]} {row.state}",
        "origin": one_line(origin_name(row.scope)),
        "updated": iso_day(row.updated_at),
        "confirmed": confirmed,
        "evidence": EVIDENCE_LABELS.get(q.basis, q.basis),
        "feedback": feedback,
        "content": one_line(row.content),
    }


class MemoryList(VirtualList[Row]):
    """Memories (and corrupt rows, flagged) with curation on single keys."""

    COLUMNS = (
        Column("pin", "", 1),
        Column("kind", "KIND", 8),
        Column("status", "STATUS", 11),
        Column("fresh", "FRESH", 5),
        Column("state", "STATE", 12),
        Column("origin", "ORIGIN", 10),
        Column("updated", "UPDATED", 10),
        Column("confirmed", "CONF", 6),
        Column("evidence", "EVID", 7),
        Column("feedback", "FB", 2),
        Column("content", "CONTENT", 0),
    )
    DROP_ORDER = ("confirmed", "evidence", "status", "feedback", "origin", "updated", "kind")
    CLASS_PREFIX = "memory-list"

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "memory-list--header",
        "memory-list--cursor",
        "memory-list--empty",
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

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "p", "curate('pin')", "Pin/unpin", id="memory.pin", tooltip="Pin or unpin the record"
        ),
        Binding(
            "1",
            "curate('useful')",
            "Useful",
            id="memory.useful",
            show=False,
            tooltip="Feedback: useful",
        ),
        Binding(
            "2",
            "curate('unhelpful')",
            "Unhelpful",
            id="memory.unhelpful",
            show=False,
            tooltip="Feedback: unhelpful",
        ),
        Binding(
            "3",
            "curate('accurate')",
            "Accurate",
            id="memory.accurate",
            show=False,
            tooltip="Feedback: accurate",
        ),
        Binding(
            "4",
            "curate('incorrect')",
            "Incorrect",
            id="memory.incorrect",
            show=False,
            tooltip="Feedback: incorrect (quarantines the record)",
        ),
        Binding(
            "d", "curate('forget')", "Forget", id="memory.forget", tooltip="Forget (asks first)"
        ),
        Binding(
            "e",
            "curate('correct')",
            "Correct",
            id="memory.correct",
            tooltip="Correct the text in an editor",
        ),
        Binding(
            "r",
            "curate('resolve')",
            "Resolve",
            id="memory.resolve",
            tooltip="Resolve a conflicted record as confirmed",
        ),
        Binding(
            "c",
            "curate('conflict')",
            "Conflict",
            id="memory.conflict",
            show=False,
            tooltip="Mark, then pick the contradicting record and press again",
        ),
        Binding(
            "u",
            "curate('undo')",
            "Undo last",
            id="memory.undo",
            tooltip="Undo the record's last event (shows a preview)",
        ),
    ]

    class Highlighted(VirtualList.Highlighted):
        """The highlighted memory changed."""

    class CurationRequested(Message):
        """The user asked for a curation verb on the highlighted record."""

        def __init__(self, memory_list: MemoryList, row: Row | None, verb: str) -> None:
            super().__init__()
            self.memory_list = memory_list
            self.row = row
            self.verb = verb

        @property
        def control(self) -> MemoryList:
            return self.memory_list

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.sort_key = "updated"

    def row_key(self, row: Row) -> str:
        return row.id

    def cells(self, row: Row) -> dict[str, str]:
        return memory_cells(row)

    def row_class(self, row: Row) -> str | None:
        state = state_of(row)
        return state if state in ("forgotten", "conflicted", "corrupt") else None

    def cell_class(self, row: Row, column: str) -> str | None:
        if isinstance(row, CorruptRow):
            return "corrupt"
        if column in ("state", "pin", "status"):
            return row.state
        if column == "fresh":
            f = row.quality.freshness
            return "bar-high" if f >= 0.85 else "bar-mid" if f >= 0.65 else "bar-low"
        return None

    def make_highlighted(self, row: Row | None) -> MemoryList.Highlighted:
        return self.Highlighted(self, row)

    def action_curate(self, verb: str) -> None:
        self.post_message(self.CurationRequested(self, self.highlighted, verb))
