"""A diff between two moments as a list: a record per line, added, changed or removed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from textual.binding import Binding, BindingType
from textual.message import Message

from store import Diff, Memory

from ..core.glyphs import KIND_CODES
from ..core.text import one_line
from ..core.view import origin_name
from .virtual_list import Column, VirtualList

What = Literal["added", "changed", "removed"]
MARKS: dict[What, str] = {"added": "+", "changed": "~", "removed": "−"}


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One record of a diff: as it was at the end (at the start, for one removed)."""

    what: What
    record: Memory
    fields: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    """A changed record's fields (stored names), each before and after."""

    @property
    def id(self) -> str:
        return self.record.id


def diff_rows(d: Diff) -> list[DiffRow]:
    """Added, then changed, then removed, each in the store's order."""
    return [
        *(DiffRow("added", m) for m in d.added),
        *(DiffRow("changed", c.end, dict(c.fields)) for c in d.changed),
        *(DiffRow("removed", m) for m in d.removed),
    ]


class DiffList(VirtualList[DiffRow]):
    """The records of a diff; enter opens one as it was, u undoes its change."""

    WRITES = frozenset({"undo"})
    COLUMNS = (
        Column("what", "", 1),
        Column("kind", "K", 1),
        Column("origin", "ORIGIN", 8),
        Column("fields", "CHANGED", 18),
        Column("text", "RECORD", 0),
    )
    DROP_ORDER = ("origin", "kind", "fields")
    CLASS_PREFIX = "diff-list"
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "diff-list--header",
        "diff-list--cursor",
        "diff-list--empty",
        "diff-list--added",
        "diff-list--changed",
        "diff-list--removed",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Record then", id="diff.open",
                tooltip="Show the record in the memory list as it was at the diff's end"),
        Binding("u", "undo", "Undo", id="diff.undo",
                tooltip="Undo the record's newest change in the range (as u in History)"),
    ]  # fmt: skip

    class Highlighted(VirtualList.Highlighted):
        """The highlighted record changed."""

    class Opened(Message):
        def __init__(self, row: DiffRow) -> None:
            super().__init__()
            self.row = row

    class UndoWanted(Message):
        def __init__(self, row: DiffRow) -> None:
            super().__init__()
            self.row = row

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.empty_text = "Nothing changed between the two moments."

    def make_highlighted(self, row: DiffRow | None) -> Message:
        return self.Highlighted(self, row)

    def row_key(self, row: DiffRow) -> str:
        return row.id

    def cells(self, row: DiffRow) -> dict[str, str]:
        m = row.record
        return {
            "what": MARKS[row.what],
            "kind": KIND_CODES.get(m.kind, "?"),
            "origin": one_line(origin_name(m.scope)),
            "fields": ", ".join(row.fields) if row.what == "changed" else "",
            "text": one_line(m.content),
        }

    def cell_class(self, row: DiffRow, column: str) -> str | None:
        return row.what if column == "what" else None

    def yank_text(self, row: DiffRow, long: bool) -> tuple[str, str] | None:
        return (row.record.content, "its text") if long else (row.id, "its id")

    def action_open(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.Opened(self.highlighted))

    def action_undo(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.UndoWanted(self.highlighted))
