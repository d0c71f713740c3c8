"""The recall preview's list: what pi would inject, in order, then what it left out and why."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType

from store import STATUS_REASONS, Candidate

from ..core.glyphs import STATE_GLYPHS
from ..core.text import one_line
from ..core.verbs import ON_RECALL
from .memory_list import (
    CURATION_BINDINGS,
    MENU_BINDING,
    PROVENANCE_BINDING,
    MemoryList,
    ask_menu,
)
from .messages import ShowProvenance, ShowRecord
from .virtual_list import Column, VirtualList

SHORT_REASONS: dict[str, str] = {
    "forgotten": "forgotten",
    "conflicted": "conflicted",
    "disputed": "disputed",
    "dormant": "dormant",
    "resource-mismatch": "path missing",
    "no-focus-match": "context only",
    "question-only": "question only",
    "subject-attribute-mismatch": "other subject",
    "context-mismatch": "off context",
    "incidental-overlap": "incidental",
    "thin-match": "thin match",
    "relative-cutoff": "below cutoff",
    "duplicate": "duplicate",
    "redundant": "redundant",
    "limit": "over limit",
}
"""Reason keys as a list cell says them; the explanation pane spells them out."""


def recall_cells(
    c: Candidate, rank: int | None, over_budget: bool = False, chosen: str = "injected"
) -> dict[str, str]:
    state = c.memory.state
    if c.selected:
        outcome = "over 2 KB" if over_budget else chosen
    else:
        outcome = SHORT_REASONS.get(c.reason or "", c.reason or "")
    return {
        "rank": str(rank) if rank is not None else "–",
        "outcome": outcome,
        "state": f"{STATE_GLYPHS[state]} {state}",
        "score": f"{c.score:.3f}",
        "factor": f"{c.factor:.3f}",
        "rank_score": f"{c.rank_score:.3f}",
        "content": one_line(c.memory.content),
    }


class RecallList(VirtualList[Candidate]):
    """Selected records first (numbered, in pi's order), then the left-out ones."""

    WRITES = frozenset({"curate"})
    COLUMNS = (
        Column("rank", "#", 2),
        Column("outcome", "OUTCOME", 13),
        Column("state", "STATE", 12),
        Column("score", "SCORE", 6),
        Column("factor", "×QUAL", 6),
        Column("rank_score", "=RANK", 6),
        Column("content", "CONTENT", 0),
    )
    DROP_ORDER = ("state", "factor", "score")
    CLASS_PREFIX = "recall-list"

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "recall-list--header",
        "recall-list--cursor",
        "recall-list--empty",
        "recall-list--selected",
        "recall-list--gated",
        "recall-list--fresh",
        "recall-list--aging",
        "recall-list--dormant",
        "recall-list--pinned",
        "recall-list--forgotten",
        "recall-list--conflicted",
        "recall-list--disputed",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "goto",
            "Show in list",
            id="recall.goto",
            tooltip="Jump to this record in the memory list",
        ),
        *(b for b in CURATION_BINDINGS if b.id in ON_RECALL),
        PROVENANCE_BINDING,
        MENU_BINDING,
    ]

    class Highlighted(VirtualList.Highlighted):
        """The highlighted candidate changed."""

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.empty_text = "/ and a prompt: what pi would inject for it."
        self.over_budget: frozenset[str] = frozenset()
        """Selected records whose digest line does not fit in 2,048 bytes."""
        self.chosen = "injected"
        """What a selected row says: injected (the preview) or selected (search)."""

    def row_key(self, row: Candidate) -> str:
        return row.memory.id

    def cells(self, row: Candidate) -> dict[str, str]:
        # Selected records come first, in pi's order: their position is their rank.
        rank = next((i + 1 for i, r in enumerate(self.rows) if r is row), None)
        over = row.memory.id in self.over_budget
        return recall_cells(row, rank if row.selected else None, over, self.chosen)

    def cell_class(self, row: Candidate, column: str) -> str | None:
        if column == "outcome":
            if row.selected:
                return "gated" if row.memory.id in self.over_budget else "selected"
            return "dormant" if row.reason in STATUS_REASONS else "gated"
        if column == "state":
            return row.memory.state
        if column == "rank" and row.selected:
            return "selected"
        return None

    def make_highlighted(self, row: Candidate | None) -> RecallList.Highlighted:
        return self.Highlighted(self, row)

    def yank_text(self, row: Candidate, long: bool) -> tuple[str, str] | None:
        m = row.memory
        return (m.content, "its text") if long else (m.id, "its id")

    def action_menu(self) -> None:
        row = self.highlighted
        ask_menu(self, None if row is None else row.memory)

    def action_curate(self, verb: str) -> None:
        """A curation key, on the highlighted record, in place: the preview re-runs."""
        row = self.highlighted
        self.post_message(
            MemoryList.CurationRequested(self, row.memory if row is not None else None, verb)
        )

    def action_provenance(self) -> None:
        row = self.highlighted
        if row is not None:
            self.post_message(ShowProvenance(row.memory.id))

    def action_goto(self) -> None:
        row = self.highlighted
        if row is not None:
            back = "i returns to the preview, which re-runs after it"
            self.post_message(ShowRecord(row.memory.id, back))
