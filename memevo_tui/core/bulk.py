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
from dataclasses import dataclass, replace

from store import CorruptRow, Memory, correction_refusal, fp

from .text import one_line
from .verbs import named, op_for

Row = Memory | CorruptRow


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
    new_text: str = ""
    """correct: the text it writes."""

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
    new_text: str = ""

    @property
    def writes(self) -> bool:
        return self.refusal is None

    @property
    def target(self) -> str:
        """What the write names: the event it undoes."""
        return self.event_id


AnyStep = Step | UndoStep


def changed_since(revision: int, m: Memory) -> str | None:
    """Why a record marked at ``revision`` is refused now, if it changed since."""
    if m.revision == revision:
        return None
    return f"Memory changed since you marked it (revision {revision}, now {m.revision})"


def plan(name: str, marked: Mapping[str, int], rows: Mapping[str, Row]) -> list[Step]:
    """The steps of the verb ``name`` over the marked records (id -> revision when marked).

    ``pin`` unpins them all when every one of them is pinned, else pins the others.
    """
    present = [r for i in marked if isinstance(r := rows.get(i), Memory)]
    op_all = op_for(name, bool(present) and all(r.pinned for r in present))
    what = named(op_all)
    steps = []
    for memory_id, revision in marked.items():
        row = rows.get(memory_id)
        if not isinstance(row, Memory):
            why = "Unknown memory id" if row is None else f"Invalid memory record ({row.reason})"
            steps.append(Step(memory_id, "", op_all, revision, why))
            continue
        refusal = changed_since(revision, row) or what.refusal(row)
        unchanged = None if refusal else what.unchanged(row)
        steps.append(Step(memory_id, row.content, op_all, revision, refusal, unchanged))
    return steps


def merge_problem(records: Sequence[Row]) -> str | None:
    """Why ``records`` cannot be merged, in one line; None: they can."""
    memories = [r for r in records if isinstance(r, Memory)]
    if len(memories) < len(records):
        return "A corrupt row is shown, never merged"
    if len({m.id for m in memories}) < 2:
        return "Merge takes two or more records: mark them (space), or use a Review pair"
    if len({m.scope for m in memories}) > 1:
        return "Merge takes records of one origin (forgetting blocks a text in its own)"
    return None


def kept_first(records: Sequence[Memory]) -> Memory:
    """The record a merge keeps unless the text says otherwise: an active one, pinned
    first, then the longest text (its text prefills the editor)."""
    return max(records, key=lambda m: (m.active, m.pinned, len(m.content), m.updated_at))


def merge_plan(
    name: str,
    records: Sequence[Memory],
    text: str,
    marked: Mapping[str, int] | None = None,
    keep_id: str | None = None,
) -> list[Step]:
    """The writes that merge ``records`` into one with ``text``, in order: a correct of
    the record kept, then a forget of each other one (the verb's parts).

    The record kept is the one whose text is ``text`` already, if any (else
    ``kept_first``): pi's correct and forget also take every same-text record of the
    origin, so a record with the kept text must be the one corrected, and a record
    with the same text as one already taken is left to that write. ``marked``: the
    revisions the records had when marked (a record changed since is refused).
    ``keep_id``: the record to keep when none has the text yet (``merge --keep``)."""
    fix, drop = (named(p) for p in named(name).parts[::-1])
    same = [m for m in records if fp(m.content) == fp(text)]
    asked = next((m for m in records if m.id == keep_id), None)
    keep = same[0] if same else asked or kept_first(records)
    taken = {fp(keep.content): keep.id}

    def changed(m: Memory) -> tuple[int, str | None]:
        revision = marked.get(m.id, m.revision) if marked else m.revision
        return revision, changed_since(revision, m)

    revision, refusal = changed(keep)
    steps = [Step(keep.id, keep.content, fix.name, revision,
                  refusal or correction_refusal(text), None, text)]  # fmt: skip
    for m in records:
        if m.id == keep.id:
            continue
        revision, refusal = changed(m)
        unchanged = None
        if m.status == "forgotten":
            unchanged = "already forgotten"
        elif (by := taken.setdefault(fp(m.content), m.id)) != m.id:
            unchanged = f"forgotten with {by} (the same text)"
        steps.append(Step(m.id, m.content, drop.name, revision, refusal,
                          None if refusal else unchanged))  # fmt: skip
    if steps[0].refusal:  # nothing is forgotten for a text that is not kept
        why = f"not written: {keep.id} cannot be corrected"
        steps[1:] = [replace(s, refusal=s.refusal or why, unchanged=None) for s in steps[1:]]
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


def blocks_note(texts: Sequence[tuple[str, str]]) -> str:
    """What a write does besides its change: it blocks each text in its origin (an undo,
    pi's §4.9, even when the text did not change, as when undoing a pin or a verdict;
    a forget or a correct, the old text). ``texts``: (origin, text) of each record."""
    origins = sorted({one_line(origin) for origin, _ in texts})
    where = origins[0] if len(origins) == 1 else f"{len(origins)} origins"
    if len(texts) == 1:
        return f"pi will also never learn this text again in {where}."
    return f"pi will also never learn these {len(texts)} texts again in {where}."
