"""The Curator's undo flows: a record's last event, an event from History, and a
bulk action's batch, each previewed first (and, for a pin, its inverse offered)."""

from __future__ import annotations

from store import CorruptRow, Memory, StoreError

from ..core.appstate import Batch
from ..core.asking import INSTEAD, Answer, ManyQuestion, UndoQuestion
from ..core.bulk import AnyStep, UndoStep, blocks_note, plan
from ..core.text import one_line
from ..core.verbs import Target, inverse_of, named
from .many import ManyRecords


class Undoing(ManyRecords):
    """Undoing one event or a batch, after a preview."""

    async def _undo_last(self, memory_id: str) -> None:
        store = self.state.store
        if store is None:
            return
        try:
            found = await store.events(memory_id=memory_id, limit=1)
        except StoreError as exc:
            self.host.store_failed(exc)
            return
        if not found or isinstance(found[0], CorruptRow):
            self.say("This record has no event to undo", severity="warning")
            return
        event = found[0]
        remembered = self.state.remembered
        batch = next(
            (b for b in reversed(remembered.batches()) if event.id in b.events), None
        ) if remembered is not None else None  # fmt: skip
        if batch is not None and len(batch.events) > 1:  # a bulk action's: undo it whole,
            await self._plan_undo(batch)  # as History does (one entry, one undo)
            return
        await self._confirm_undo(event.id, f"its last event ({one_line(event.reason, 60)})")

    def undo_event(self, event_id: str, what: str) -> None:
        """Undo an event after a preview (from the history)."""
        if not self.refused():
            self._run("curator-lookup", self._confirm_undo(event_id, what))

    async def _confirm_undo(self, event_id: str, what: str) -> None:
        store = self.state.store
        if store is None:
            return
        try:
            preview = await store.undo_preview(event_id)
        except StoreError as exc:  # upstream's refusal, or why the store could not tell
            self.say(f"Undo refused: {exc}", title="Undo", severity="error")
            return
        target = Target(event_id=event_id)
        inverse = inverse_of(preview)

        def done(yes: Answer) -> None:
            if yes == INSTEAD:  # pin or unpin: the layer back, nothing blocked
                memory_id = str(preview[0][0].get("id", ""))
                self.curate(self.state.find(memory_id), inverse)
            elif yes is True:
                self.write("undo", lambda s: named("undo").call(s, target))

        self.host.ask(UndoQuestion(what, preview, inverse), done)

    def undo_batch(self, batch: Batch) -> None:
        """Preview undoing every event of ``batch`` (newest first), then undo them."""
        if not self.refused():
            self._run("curator-lookup", self._plan_undo(batch))

    async def _plan_undo(self, batch: Batch) -> None:
        store = self.state.store
        if store is None:
            return
        steps: list[AnyStep] = []
        blocked: list[tuple[str, str]] = []
        inverses: set[str] = set()  # the verb that would undo each event with no block
        for event_id in reversed(batch.events):
            memory_id, text = "", ""
            try:
                event = await store.event(event_id)
                if event.after:
                    memory_id = str(event.after[0].get("id", ""))
                    text = str(event.after[0].get("content", ""))
                blocked += [(str(a.get("scope", "")), str(a.get("content", "")))
                            for a in event.after]  # fmt: skip
                inverses.add(inverse_of(await store.undo_preview(event_id)))
                steps.append(UndoStep(event_id, memory_id, text))
            except StoreError as exc:  # upstream's refusal, or why the store could not tell
                steps.append(UndoStep(event_id, memory_id, text, str(exc)))
                inverses.add("")
        title = f"Undo the {batch.verb} of {len(batch.events)} records ({batch.at[:16]})?"
        if batch.cut_short:
            title = (
                f"Undo the {batch.verb} cut short ({batch.at[:16]}): the {len(batch.events)} "
                f"of {batch.planned} records it wrote?"
            )

        inverse = next(iter(inverses)) if len(inverses) == 1 else ""
        instead = f"{inverse.capitalize()} the {len(steps)}" if inverse else ""
        notes = [blocks_note(blocked)] if blocked else []

        def done(yes: Answer) -> None:
            if yes == INSTEAD:  # pin or unpin them: the layers back, nothing blocked
                rows = {r.id: r for r in self.state.rows}
                marks = {s.memory_id: r.revision for s in steps
                         if isinstance(r := rows.get(s.memory_id), Memory)}  # fmt: skip
                again = plan(inverse, marks, rows)
                self._run("curator-bulk", self._write_many(inverse, again))
            elif yes is True:
                self._run("curator-bulk", self._write_many("undo", steps))

        self.host.ask(ManyQuestion(title, steps, notes, instead=instead), done)
