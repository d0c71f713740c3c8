"""The memory list: every record on one line, colour-coded and glyph-coded by state."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message

from store import CorruptRow, Memory

from ..core.glyphs import (
    EVIDENCE_CODES,
    KIND_CODES,
    STATE_GLYPHS,
    VERDICT_GLYPHS,
    age,
    freshness_bar,
    state_of,
    time_left,
)
from ..core.text import one_line
from ..core.verbs import KEYED
from ..core.view import origin_name
from .messages import PurgeAsked, ShowProvenance
from .virtual_list import Column, VirtualList

Row = Memory | CorruptRow


NO_BAR = "  –  "
"""The FRESH cell of a forgotten or conflicted record: it is never recalled, so it has
no time left to draw (a full bar, struck through, read as "fresh")."""


def memory_cells(row: Row) -> dict[str, str]:
    """The text of each column for one row (all plain, all visible)."""
    if isinstance(row, CorruptRow):
        return {
            "state": STATE_GLYPHS["corrupt"],
            "kind": "?",
            "content": f"corrupt row {one_line(row.id)}: {row.reason}",
        }
    q = row.quality
    reinforced = q.confirmed_at[:10] > row.updated_at[:10]
    return {
        "state": STATE_GLYPHS[row.state],
        "fresh": NO_BAR
        if row.status in ("forgotten", "conflicted")
        else freshness_bar(time_left(row)),
        "kind": KIND_CODES.get(row.kind, "?"),
        "status": "✓" if row.status == "confirmed" else "",
        "age": ("↻" if reinforced else "") + age(q.age_days),
        "origin": one_line(origin_name(row.scope)),
        "evidence": EVIDENCE_CODES.get(q.basis, "?"),
        "feedback": (VERDICT_GLYPHS[row.utility.verdict] if row.utility else "·")
        + (VERDICT_GLYPHS[row.accuracy.verdict] if row.accuracy else "·"),
        "content": one_line(row.content),
    }


CURATION_BINDINGS: tuple[Binding, ...] = tuple(
    Binding(v.key, v.action, v.label, id=v.binding_id, show=v.footer, tooltip=v.tooltip)
    for v in KEYED
)
"""The curation keys, on every list of records (ids shared: one remap serves all)."""

PROVENANCE_BINDING = Binding(
    "P",
    "provenance",
    "Source",
    id="record.provenance",
    show=False,
    tooltip="Where the record came from: its sources, the passage that states it, "
    "pi's session around it",
)
"""On every list of records: where the highlighted one came from."""

PURGE_BINDING = Binding(
    "X",
    "purge",
    "Purge",
    id="record.purge",
    show=False,
    tooltip="Purge a leaked secret the record holds from every copy the store keeps: "
    "a preview lists each place first",
)
"""On every list of records: the secret it holds, out of every copy (Review's first item)."""

MENU_BINDING = Binding(
    "full_stop",
    "menu",
    "Menu",
    id="record.menu",
    show=False,
    tooltip="What can be done to the record: where it came from, its history and turns, "
    "each verb that applies, copying its id or text (enter in the memory list and search)",
)
"""On every list of records: a menu of what can be done to the highlighted one."""


class RecordMenuRequested(Message):
    """``.`` (or ``enter``) on a list of records: the menu of what can be done to it."""

    def __init__(self, source: VirtualList[Any], record: Memory) -> None:
        super().__init__()
        self.source = source
        self.record = record

    @property
    def control(self) -> VirtualList[Any]:
        return self.source


def ask_menu(source: VirtualList[Any], record: Row | None) -> None:
    """Ask for the record menu of ``record`` (a corrupt row has none)."""
    if isinstance(record, Memory):
        source.post_message(RecordMenuRequested(source, record))
    else:
        source.notify("No memory selected" if record is None else "A corrupt row has no menu",
                      severity="warning")  # fmt: skip


def _only_origin(rows: Sequence[Row]) -> str | None:
    """The scope all ``rows`` share, or None (it stops at the second one it meets)."""
    scope: str | None = None
    for row in rows:
        if isinstance(row, Memory):
            if scope is None:
                scope = row.scope
            elif row.scope != scope:
                return None
    return scope


class MemoryList(VirtualList[Row]):
    """Memories (and corrupt rows, flagged) with curation on single keys."""

    WRITES = frozenset({"curate"})
    COLUMNS = (
        Column("mark", "", 1),
        Column("state", "", 1),
        Column("fresh", "FRESH", 6),
        Column("kind", "K", 2),
        Column("status", "C", 2),
        Column("age", "AGE", 5, sort="confirmed"),
        Column("origin", "ORIGIN", 8),
        Column("evidence", "E", 2),
        Column("feedback", "FB", 2),
        Column("content", "CONTENT", 0),
    )
    """The state glyph; time left before dormancy; kind; ✓ confirmed; age since the last
    confirmation (↻: confirmed again by later evidence); origin; evidence; feedback.
    The legend is in ?; the detail pane spells every field out."""
    DROP_ORDER = ("status", "evidence", "feedback", "kind", "age", "origin")
    """By how little they say: the origin says most, where records of several projects
    are listed; where they are all of one (``origin:infra``, or a one-project store), it
    says nothing and goes first."""
    MIN_FLEX = 44  # the memory text keeps at least this much room
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
        "memory-list--marked",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        *CURATION_BINDINGS,
        PROVENANCE_BINDING,
        PURGE_BINDING,
        Binding(
            "enter,full_stop",
            "menu",
            "Menu",
            id=MENU_BINDING.id,
            show=False,
            tooltip=MENU_BINDING.tooltip,
        ),
    ]

    class Highlighted(VirtualList.Highlighted):
        """The highlighted memory changed."""

    class CurationRequested(Message):
        """The user asked for a curation verb on the highlighted record (of any list of
        records: this one, or the recall preview's)."""

        def __init__(
            self, source: VirtualList[Any], row: Row | None, verb: str, group: Sequence[Row] = ()
        ) -> None:
            super().__init__()
            self.source = source
            self.row = row
            self.verb = verb
            self.group = tuple(group)
            """The records a verb that takes several acts on (a Review pair)."""

        @property
        def control(self) -> VirtualList[Any]:
            return self.source

    MARK = "▸"
    """The glyph of a marked row (marks are never colour alone)."""

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.sort_key = "updated"
        self.marked: frozenset[str] = frozenset()
        """Ids of the marked records (the view owns the marks; the list draws them)."""
        self._one_origin: str | None = None
        """The one scope every listed record has (None: several, or none listed)."""

    def drop_order(self) -> Sequence[str]:
        if self._one_origin is not None:
            return ("origin", *(k for k in self.DROP_ORDER if k != "origin"))
        return self.DROP_ORDER

    def set_rows(
        self,
        rows: Sequence[Row],
        keep: str | None = None,
        *,
        top: bool = False,
        fresh: Collection[str] = (),
    ) -> None:
        self._one_origin = _only_origin(rows)
        super().set_rows(rows, keep, top=top, fresh=fresh)

    def replace_row(self, key: str, row: Row) -> bool:
        one = self._one_origin
        if one is not None and isinstance(row, Memory) and row.scope != one:
            self._one_origin = None  # adopted into another origin: the column says something
            self._cache.clear()
        return super().replace_row(key, row)

    def insert_row(self, index: int, row: Row) -> None:
        one = self._one_origin
        if not self.rows:
            self._one_origin = _only_origin((row,))
        elif one is not None and isinstance(row, Memory) and row.scope != one:
            self._one_origin = None  # another origin listed: the column says something
            self._cache.clear()
        super().insert_row(index, row)

    def show_marks(self, marked: frozenset[str]) -> None:
        if marked != self.marked:
            self.marked = marked
            self.redraw()

    def row_key(self, row: Row) -> str:
        return row.id

    def cells(self, row: Row) -> dict[str, str]:
        cells = memory_cells(row)
        if row.id in self.marked:
            cells["mark"] = self.MARK
        return cells

    def row_class(self, row: Row) -> str | None:
        state = state_of(row)
        if state in ("forgotten", "conflicted", "corrupt"):
            return state
        return "marked" if row.id in self.marked else None

    def cell_class(self, row: Row, column: str) -> str | None:
        if isinstance(row, CorruptRow):
            return "corrupt"
        if column in ("state", "fresh"):  # bar and glyph in the state's colour: they agree
            return row.state
        return "marked" if row.id in self.marked else None

    def make_highlighted(self, row: Row | None) -> MemoryList.Highlighted:
        return self.Highlighted(self, row)

    def yank_text(self, row: Row, long: bool) -> tuple[str, str] | None:
        if isinstance(row, CorruptRow):
            return (row.raw, "the corrupt row as stored") if long else (row.id, "its id")
        return (row.content, "its text") if long else (row.id, "its id")

    def action_provenance(self) -> None:
        row = self.highlighted
        if isinstance(row, Memory):
            self.post_message(ShowProvenance(row.id))
        else:
            self.notify("No memory selected", severity="warning")

    def action_purge(self) -> None:
        row = self.highlighted
        if isinstance(row, Memory):
            self.post_message(PurgeAsked(row.id))
        else:
            self.notify("No memory selected", severity="warning")

    def action_curate(self, verb: str) -> None:
        self.post_message(self.CurationRequested(self, self.highlighted, verb))

    def action_menu(self) -> None:
        ask_menu(self, self.highlighted)
