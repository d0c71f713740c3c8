"""Bulk actions: what one verb will do to each marked record, before anything is written.

A bulk action is many ordinary writes, one pi event per record, each exactly the
operation a single key performs; nothing here writes. ``plan`` applies upstream's
rules to the records as loaded now, so the preview can list every record with
what will happen to it, or upstream's reason for refusing it, or why it changes
nothing. The store checks again when it writes (a record changed in between is
refused then), and one refusal never stops the others. No Textual here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from store import CorruptRow, Memory

Row = Memory | CorruptRow

BULK_VERBS = ("pin", "useful", "unhelpful", "accurate", "incorrect", "forget", "resolve", "adopt")
FEEDBACK = ("useful", "unhelpful", "accurate", "incorrect")
WORDS = {
    "pin": "pin",
    "unpin": "unpin",
    "forget": "forget",
    "resolve": "resolve as confirmed",
    "adopt": "adopt into",
    **{v: f"mark {v}" for v in FEEDBACK},
}


@dataclass(frozen=True, slots=True)
class Step:
    """One marked record: what will be written, or why not."""

    memory_id: str
    text: str
    op: str
    """The upstream operation: pin, unpin, a verdict, forget, resolve or adopt."""
    revision: int
    """The revision the write expects (the one the record had when it was marked)."""
    refusal: str | None = None
    """Upstream's reason for refusing it (or a change since it was marked)."""
    unchanged: str | None = None
    """Why upstream would accept it but record nothing (the verdict is already there)."""

    @property
    def writes(self) -> bool:
        return self.refusal is None and self.unchanged is None

    @property
    def target(self) -> str:
        """What the write names: the record."""
        return self.memory_id


@dataclass(frozen=True, slots=True)
class UndoStep:
    """One event of a bulk action being undone: the event, the record it wrote (its
    first), that record's text as the event left it, and upstream's refusal if any."""

    event_id: str
    memory_id: str
    text: str
    refusal: str | None = None
    op: str = "undo"
    unchanged: str | None = None

    @property
    def writes(self) -> bool:
        return self.refusal is None

    @property
    def target(self) -> str:
        """What the write names: the event it undoes."""
        return self.event_id


AnyStep = Step | UndoStep


def _refusal(m: Memory, op: str) -> str | None:
    """Upstream's refusal for one record, as the store words it (§4.3–§4.8)."""
    if op in ("pin", *FEEDBACK) and not m.active:
        return "Resolve/correct the memory first"
    if op == "resolve" and m.status != "conflicted":
        return "Memory is not conflicted"
    if op == "adopt" and m.scope != "legacy":
        return "Only unscoped legacy memories can be adopted"
    return None


def _unchanged(m: Memory, op: str) -> str | None:
    """Why the bulk action leaves a record as it is: it already is what the verb makes
    it. (A single key would still write: pi records a repeated pin as a pin event, and
    a repeated verdict as a receipt; a bulk action writes only what changes.)"""
    if op in ("useful", "unhelpful") and m.utility is not None and m.utility.verdict == op:
        return f"already marked {op}"
    if op in ("accurate", "incorrect") and m.accuracy is not None and m.accuracy.verdict == op:
        return f"already marked {op}"
    if op == "pin" and m.pinned:
        return "already pinned"
    return None


def plan(verb: str, marked: Mapping[str, int], rows: Mapping[str, Row]) -> list[Step]:
    """The steps of ``verb`` over the marked records (id -> revision when marked).

    ``pin`` unpins them all when every one of them is pinned, else pins the others.
    """
    present = [rows[i] for i in marked if isinstance(rows.get(i), Memory)]
    op_all = verb
    if verb == "pin" and present and all(isinstance(r, Memory) and r.pinned for r in present):
        op_all = "unpin"
    steps = []
    for memory_id, revision in marked.items():
        row = rows.get(memory_id)
        if not isinstance(row, Memory):
            why = "Unknown memory id" if row is None else f"Invalid memory record ({row.reason})"
            steps.append(Step(memory_id, "", op_all, revision, why))
            continue
        refusal: str | None = None
        if row.revision != revision:
            refusal = (
                f"Memory changed since you marked it (revision {revision}, now {row.revision})"
            )
        refusal = refusal or _refusal(row, op_all)
        unchanged = None if refusal else _unchanged(row, op_all)
        steps.append(Step(memory_id, row.content, op_all, revision, refusal, unchanged))
    return steps


def left_as_they_are(steps: Sequence[AnyStep]) -> list[str]:
    """One line per reason records are left as they are: "2 already pinned: left as
    they are"."""
    counts: dict[str, int] = {}
    for s in steps:
        if s.unchanged and not s.refusal:
            counts[s.unchanged] = counts.get(s.unchanged, 0) + 1
    return [f"{n} {why}: left as {'they are' if n > 1 else 'it is'}" for why, n in counts.items()]


def tally(steps: Sequence[AnyStep]) -> tuple[int, int, int]:
    """(to write, unchanged, refused)."""
    writes = sum(1 for s in steps if s.writes)
    unchanged = sum(1 for s in steps if s.unchanged and not s.refusal)
    return writes, unchanged, len(steps) - writes - unchanged
