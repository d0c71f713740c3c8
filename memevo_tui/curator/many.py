"""The Curator's flows over many records: a bulk action (one verb on every marked
record) and a merge (several records into one), journaled as one batch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from store import Memory, MemoryStore, Refused, StoreError, iso, js_trim

from ..core.asking import Answer, ManyQuestion, Severity, TextQuestion
from ..core.bulk import (
    AnyStep,
    UndoStep,
    blocks_note,
    kept_first,
    merge_plan,
    merge_problem,
    plan,
)
from ..core.state import Row
from ..core.text import one_line
from ..core.verbs import BULK_VERBS, Target, named
from .core import CuratorCore


class ManyRecords(CuratorCore):
    """Bulk actions and merges: previewed, then written one pi write at a time."""

    def merge(self, rows: Sequence[Row], name: str, marks: Mapping[str, int] | None = None) -> None:
        """Merge ``rows`` with the verb ``name`` (it takes several): the user edits the
        text kept (prefilled with ``bulk.kept_first``'s), sees every write, then they
        are written as one batch (``marks``: the revisions when the rows were marked)."""
        why = merge_problem(rows)
        if why is not None:
            self.say(why, title="Nothing merged", severity="warning")
            return
        if self.refused() or self.state.store is None:
            return
        records = [r for r in rows if isinstance(r, Memory)]
        first = kept_first(records)

        def edited(text: Answer) -> None:
            if isinstance(text, str):
                self._preview_merge(name, records, text, marks)

        self.host.ask(TextQuestion(first.id, first.content), edited)

    def _preview_merge(
        self, name: str, records: Sequence[Memory], text: str, marks: Mapping[str, int] | None
    ) -> None:
        self._run("curator-lookup", self._ask_merge(name, records, text, marks))

    async def _ask_merge(
        self, name: str, records: Sequence[Memory], text: str, marks: Mapping[str, int] | None
    ) -> None:
        """Ask before a merge, having proved it on the project's recent prompts: the
        kept record corrected, each other one forgotten."""
        text = js_trim(text)  # as pi stores it: the editor's last line break is no text
        steps = merge_plan(name, records, text, marks)
        scope = records[0].scope
        # blocked: each forgotten text, and the kept record's old text only if it changes
        lost = (s.text for s in steps if s.writes and s.new_text != s.text)
        blocked = [(scope, t) for t in dict.fromkeys(lost)]
        ungrouped = self._grouping_notes()
        notes = [blocks_note(blocked), *ungrouped]
        effect = await self._proved(records, lambda: _merged(records, steps[0].memory_id, text))
        question = ManyQuestion(
            f"Merge {len(records)} records into {steps[0].memory_id}?",
            steps,
            [*notes, effect] if effect else notes,
            grouped=not ungrouped,
        )

        def done(yes: Answer) -> None:
            if yes is True:
                self._run("curator-bulk", self._write_many(name, steps))

        self.host.ask(question, done)

    def bulk(self, name: str, marks: Mapping[str, int], arrived: set[str]) -> bool:
        """Preview the verb ``name`` on every marked record (id -> revision when
        marked), then write them one by one. False: ``name`` is not a bulk verb."""
        if name not in BULK_VERBS:
            return False
        if self.refused():
            return True
        if named(name).asks == "origin":
            self.ask_origin(lambda origin: self._preview_bulk(name, marks, arrived, origin))
        else:
            self._preview_bulk(name, marks, arrived, "")
        return True

    def _preview_bulk(
        self, name: str, marks: Mapping[str, int], arrived: set[str], origin: str
    ) -> None:
        rows = {r.id: r for r in self.state.rows}
        steps = plan(name, marks, rows)
        op = steps[0].op if steps else name
        into = f" {origin}" if named(op).asks == "origin" else ""  # "adopt into /home/you/app"
        title = f"{named(op).words.capitalize()}{into}: {len(steps)} marked record(s)?"
        notes = []
        if arrived:
            marked = sum(1 for i in arrived if i in marks)
            notes.append(
                f"{len(arrived)} record(s) arrived since marking began; "
                f"{marked or 'none'} of them marked (by hand)."
            )
        ungrouped = self._grouping_notes()
        question = ManyQuestion(title, steps, [*notes, *ungrouped], grouped=not ungrouped)

        def done(yes: Answer) -> None:
            if yes is True:
                self._run("curator-bulk", self._write_many(op, steps, origin))

        self.host.ask(question, done)

    def _grouping_notes(self) -> list[str]:
        """What the preview must say when the bulk action cannot be journaled as one."""
        remembered = self.state.remembered
        if remembered is None:
            return ["This store is temporary: the history shows each record's event on its "
                    "own, and they are undone record by record."]  # fmt: skip
        problem = remembered.check()
        if problem is None:
            return []
        return [f"Batch undo is off ({problem}): the events are undone record by record."]

    @staticmethod
    async def _one(store: MemoryStore, step: AnyStep, origin: str) -> str | None:
        """One record, as the single key writes it (at the revision it was marked)."""
        if isinstance(step, UndoStep):
            target = Target(event_id=step.event_id)
        else:
            target = Target(step.memory_id, step.revision, step.new_text, origin=origin)
        return await named(step.op).call(store, target)

    async def _write_many(self, op: str, steps: Sequence[AnyStep], origin: str = "") -> None:
        """Write each step in turn, journaled as one bulk action before the first write and
        completed after the last. A refusal is noted and the next one written; a store
        that cannot be written at all (replaced, read-only, busy, a full disk) stops it."""
        store = self.state.store
        if store is None:
            return
        events: list[str] = []
        refused = [(s.text or s.memory_id or s.target, s.refusal) for s in steps if s.refusal]
        unchanged = sum(1 for s in steps if s.unchanged and not s.refusal)
        writing = [s for s in steps if s.writes]
        batch_id = await self._begin(store, op, writing)
        ids: dict[str, None] = {}
        stopped, left = "", 0
        for n, step in enumerate(writing):
            try:
                event_id = await self._one(store, step, origin)
                if event_id is None:
                    unchanged += 1
                    continue
                events.append(event_id)
                ids.update(dict.fromkeys((await store.event(event_id)).record_ids))
            except Refused as exc:  # this record only: the next one is written
                refused.append((step.text or step.memory_id or step.target, str(exc)))
                if named(op).parts and n == 0:  # a merge's correct: nothing else is written
                    stopped, left = str(exc), len(writing) - 1
                    break
            except StoreError as exc:  # the store cannot be written: none of the rest is
                stopped, left = str(exc), len(writing) - n
                break
        if batch_id is not None and self.state.remembered is not None:
            self.state.remembered.finish_batch(batch_id, events)
        try:
            rows = await store.memories(list(ids))
        except StoreError:
            rows = []
        self._tell_bulk(op, events, refused, unchanged, stopped, left)
        self.state.written(rows, bulk=op, stopped=bool(stopped))

    async def _begin(self, store: MemoryStore, op: str, writing: Sequence[AnyStep]) -> str | None:
        """Journal a bulk action before its first write (None: not journaled)."""
        remembered = self.state.remembered
        if remembered is None or len(writing) < 2:
            return None
        try:
            after = await store.last_event_rowid()
        except StoreError:
            return None  # the first write will say what is wrong
        at = iso(self.state.clock())
        targets = [s.target for s in writing]
        return remembered.begin_batch(
            op, op if named(op).parts else writing[0].op, at, targets, after
        )

    def _tell_bulk(
        self,
        op: str,
        events: Sequence[str],
        refused: Sequence[tuple[str, str | None]],
        unchanged: int,
        stopped: str,
        left: int,
    ) -> None:
        done = named(op).did.format(n=len(events))
        lines = [f"{done}, {len(refused)} refused, {unchanged} unchanged"]
        if stopped:
            lines.append(f"stopped, {left} not written: {stopped}")
        lines += [f"refused: “{one_line(t, 40)}”: {why}" for t, why in refused[:4]]
        if len(refused) > 4:
            lines.append(f"…and {len(refused) - 4} more")
        severity: Severity = "error" if stopped else "warning" if refused else "information"
        self.say("\n".join(lines), title="Bulk action", severity=severity, timeout=12)


def _merged(records: Sequence[Memory], kept: str, text: str) -> list[Memory]:
    """The records as a merge leaves them: ``kept`` corrected to ``text`` (pi's correct),
    every other one forgotten."""
    correct, forget = named("correct").becomes, named("forget").becomes
    assert correct is not None and forget is not None
    return [
        correct(m, Target(m.id, m.revision, text=text)) if m.id == kept
        else forget(m, Target(m.id, m.revision))
        for m in records
    ]  # fmt: skip
