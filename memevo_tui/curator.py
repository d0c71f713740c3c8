"""The Curator: every write the dashboard makes, and nothing else.

A plain object the app owns (no widget). Views call it directly, with the records
they mean: ``curate`` for one record, ``bulk`` for the marked ones, ``undo_event``
and ``undo_batch`` from the history. Each flow checks that a write may happen now,
asks what the verb needs (``verbs.Verb.asks``: a yes in the verb's dialog, an
origin, a new text, the event to undo), runs the store call in one of the app's
workers, and reports the one result: the records as stored now go to the shared
state (``DashboardState.written``), which tells every view, and a toast says what
was written or why not. A bulk action is journaled before its first write and
completed after its last (``appstate``), so History shows it as one entry.

Follow one key, ``p``: ``MemoryList`` binds it to ``curate('pin')`` and posts
``CurationRequested``; the Memories view (or the screen, for Search, Recall and
Review) calls ``Curator.curate(row, "pin")``; the verb, pin or unpin as the record
is, is written by ``_write`` at the revision on screen; its rows reach the state and
every view repaints them in place. A curation key pressed while a single write is in
flight waits for its answer, then acts on the record as that write left it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import replace
from typing import Any

from textual.app import App
from textual.notifications import SeverityLevel
from textual.worker import WorkerState

from store import Changed, CorruptRow, Memory, MemoryStore, Refused, Replaced, StoreError, iso

from .appstate import Batch
from .bulk import AnyStep, UndoStep, kept_first, merge_plan, merge_problem, plan
from .keys import reopen_hint
from .messages import ReloadWanted, StoreFailed
from .screens.confirm import (
    ConfirmScreen,
    blocks_note,
    bulk_dialog,
    pair_dialog,
    undo_dialog,
    verb_dialog,
)
from .screens.correct import edit_correction
from .screens.prompt import PromptScreen
from .state import DashboardState, Row
from .text import one_line
from .verbs import BULK_VERBS, Target, Verb, inverse_of, named, op_for

GROUPS = ("curator-write", "curator-bulk", "curator-lookup")
"""The worker groups of the Curator's flows (tests wait for them to settle)."""
IN_FLIGHT = (WorkerState.PENDING, WorkerState.RUNNING)
"""A worker still working (the views' busy checks read it too)."""
Write = Callable[[MemoryStore], Awaitable[str | None]]
"""One store write, its target bound: the event it recorded, or None."""


class Curator:
    """Owns every write: one record, many, an undo, a batch's undo, and the journal."""

    def __init__(self, app: App[Any], state: DashboardState) -> None:
        self.app = app
        self.state = state
        self._writing = 0  # single-record writes not yet answered
        self._waiting: deque[tuple[str, str]] = deque()  # keys pressed meanwhile

    @property
    def busy(self) -> bool:
        """A flow is in flight (a worker of the Curator's; a dialog waiting for the
        user is not in flight)."""
        return any(w.group in GROUPS and w.state in IN_FLIGHT for w in self.app.workers)

    def _run(self, group: str, work: Coroutine[Any, Any, None]) -> None:
        self.app.run_worker(work, group=group, exit_on_error=False)

    # ------------------------------------------------------------ may it write now

    def refused(self) -> bool:
        """Say why nothing may be written now (the time dial, read-only, the file was
        replaced); True if so."""
        why = self.state.write_refusal()
        if why is not None:
            store = self.state.store
            try:
                if store is not None:
                    store.check_file()
            except Replaced as exc:  # the store's state says so at once, as a poll would
                why += f"; {reopen_hint(self.app)}"
                self.app.post_message(StoreFailed(exc))
            self.app.notify(why, title="Nothing written", severity="warning")
        return why is not None

    def usable(self, row: Row | None) -> Memory | None:
        """``row`` when one record may be written now; else None, and the toast why."""
        if row is None:
            self.app.notify("No memory selected", severity="warning")
            return None
        if isinstance(row, CorruptRow):
            self.app.notify(
                f"{one_line(row.id)} is a corrupt row: it is shown, never acted upon",
                severity="error",
            )
            return None
        if self.state.store is None:
            self.app.notify("The store is still opening", severity="warning")
            return None
        return None if self.refused() else row

    # ------------------------------------------------------------ one record

    def curate(self, row: Row | None, name: str) -> None:
        """Write the verb ``name`` on one record (a pair: see ``pair``; several: ``merge``)."""
        memory = self.usable(row)
        if memory is None:
            return
        if self._writing:  # p p: the second acts on the record as the first leaves it
            self._waiting.append((memory.id, name))
            return
        what = named(op_for(name, memory.pinned))
        target = Target(memory.id, memory.revision)
        if what.asks == "confirm":
            duplicates = len(self.state.duplicates(memory)) if what.with_duplicates else 0

            def dialog(effect: str = "") -> ConfirmScreen:
                return verb_dialog(what, memory.content, duplicates, effect)

            if what.becomes is not None and self.state.injections is not None:
                self._run("curator-lookup", self._ask_proved(memory, what, target, dialog))
            else:
                self.ask(dialog(), what.name, lambda s: what.call(s, target))
        elif what.asks == "text":
            self._edit_correction(memory, what)
        elif what.asks == "event":
            self._run("curator-lookup", self._undo_last(memory.id))
        elif what.asks == "origin":
            self.ask_origin(
                lambda origin: self.write(
                    what.name, lambda s: what.call(s, replace(target, origin=origin))
                )
            )
        else:
            proved = what.becomes is not None and self.state.injections is not None
            self.write(what.name, lambda s: what.call(s, target),
                       prove=(memory, what, target) if proved else None)  # fmt: skip

    def pair(self, first: Memory, second: Memory, name: str) -> None:
        """Write the verb ``name`` that takes a pair on ``first`` and ``second``, after
        its dialog."""
        what = named(name)
        target = Target(first.id, first.revision, other_id=second.id)
        self.ask(
            pair_dialog(what, first.content, second.content),
            what.name,
            lambda s: what.call(s, target),
        )

    def merge(self, rows: Sequence[Row], name: str, marks: Mapping[str, int] | None = None) -> None:
        """Merge ``rows`` with the verb ``name`` (it takes several): the user edits the
        text kept (prefilled with ``bulk.kept_first``'s), sees every write, then they
        are written as one batch (``marks``: the revisions when the rows were marked)."""
        why = merge_problem(rows)
        if why is not None:
            self.app.notify(why, title="Nothing merged", severity="warning")
            return
        if self.refused() or self.state.store is None:
            return
        records = [r for r in rows if isinstance(r, Memory)]
        first = kept_first(records)

        def edited(text: str | None) -> None:
            if text is not None:
                self._preview_merge(name, records, text, marks)

        edit_correction(self.app, first.id, first.content, edited)

    def _preview_merge(
        self, name: str, records: Sequence[Memory], text: str, marks: Mapping[str, int] | None
    ) -> None:
        steps = merge_plan(name, records, text, marks)
        scope = records[0].scope
        blocked = [(scope, t) for t in dict.fromkeys(s.text for s in steps if s.writes)]
        notes = [blocks_note(blocked), *self._grouping_notes()]
        dialog = bulk_dialog(
            f"Merge {len(records)} records into {steps[0].memory_id}?",
            steps,
            notes,
            grouped=not self._grouping_notes(),
        )

        def done(yes: bool | None) -> None:
            if yes:
                self._run("curator-bulk", self._write_many(name, steps))

        self.app.push_screen(dialog, done)

    def _edit_correction(self, row: Memory, what: Verb) -> None:
        def done(text: str | None) -> None:
            if text is None:
                return
            if text.strip() == row.content.strip():
                self.app.notify("Text unchanged: nothing written")
                return
            target = Target(row.id, row.revision, text=text)
            if what.becomes is None or self.state.injections is None:
                self.write(what.name, lambda s: what.call(s, target))
                return

            def dialog(effect: str = "") -> ConfirmScreen:  # the fix proved, then asked
                return verb_dialog(what, f"{row.content}\n  →\n{text}", 0, effect)

            self._run("curator-lookup", self._ask_proved(row, what, target, dialog))

        edit_correction(self.app, row.id, row.content, done)

    async def _ask_proved(
        self, memory: Memory, what: Verb, target: Target, dialog: Callable[[str], ConfirmScreen]
    ) -> None:
        """Ask, having proved the write on the project's recent prompts: the same replay
        as the Turns view's, on the records as they would be after it."""
        effect = await self._proof(memory, what, target)
        self.ask(dialog(effect), what.name, lambda s: what.call(s, target))

    async def _proof(self, memory: Memory, what: Verb, target: Target) -> str:
        """What writing ``what`` on ``memory`` does to its project's recent prompts, by
        the Turns view's replay on the records as they would be after it ("": not known)."""
        from .turnlog import fix_effect

        log, becomes = self.state.injections, what.becomes
        try:
            index = await self.state.recall_index()
            if log is None or index is None or becomes is None:
                return ""
            after = becomes(memory, target)
            return await asyncio.to_thread(fix_effect, log, index, memory, after)
        except StoreError:
            return ""

    def ask(self, dialog: ConfirmScreen, name: str, op: Write) -> None:
        """Write ``op`` once the user says yes to ``dialog``."""

        def done(yes: bool | None) -> None:
            if yes:
                self.write(name, op)

        self.app.push_screen(dialog, done)

    def ask_origin(self, then: Callable[[str], None]) -> None:
        """Adopting needs the origin: the project directory the records belong to."""

        def done(origin: str | None) -> None:
            if origin is not None and origin.strip():
                then(origin.strip())

        self.app.push_screen(
            PromptScreen(
                "Adopt into which origin?",
                placeholder="/home/you/projects/app",
                hint="An absolute path: the project these unscoped legacy records belong to.",
            ),
            done,
        )

    def write(
        self, name: str, op: Write, *, prove: tuple[Memory, Verb, Target] | None = None
    ) -> None:
        """Run one store write; a curation key pressed meanwhile waits for its answer.
        ``prove``: the record, verb and target of a write that asks nothing: what it does
        to recent turns is worked out first and said in its toast."""
        self._writing += 1
        self._run("curator-write", self._write(name, op, prove))

    async def _write(
        self, name: str, op: Write, prove: tuple[Memory, Verb, Target] | None = None
    ) -> None:
        """Run one store write, read back the records it changed, and report it."""
        try:
            store = self.state.store
            if store is None:
                return
            effect = await self._proof(*prove) if prove is not None else ""
            try:
                event_id: str | None = await op(store)
                rows: list[Row] = []
                if event_id is not None:
                    event = await store.event(event_id)
                    rows = await store.memories(event.record_ids)
            except StoreError as exc:  # refused, read-only, busy: nothing was written
                self._waiting.clear()  # the keys pressed after it assumed it was written
                self._tell_failed(name, exc)
                return
            except Exception as exc:  # a bug: said, and the keys after it dropped
                self._waiting.clear()
                self.app.notify(f"The write failed: {exc}", severity="error")
                return
            self._tell_written(name, event_id, rows, effect)
        finally:
            self._wrote()

    def _wrote(self) -> None:
        """A write was answered (its rows are in the state): run a key that waited."""
        self._writing = max(0, self._writing - 1)
        if not self._writing and self._waiting:
            memory_id, name = self._waiting.popleft()
            self.curate(self.state.find(memory_id), name)

    def _tell_failed(self, name: str, error: StoreError) -> None:
        if isinstance(error, Replaced):  # the app says so, and keeps saying it
            self.app.post_message(StoreFailed(error))
            return
        if isinstance(error, Changed):
            title = "Changed under you"
        else:
            title = "Refused" if isinstance(error, Refused) else f"Not written: {error.cause}"
        self.app.notify(f"{name}: {error}", title=title, severity="error", timeout=8)
        if isinstance(error, Changed):
            self.app.post_message(ReloadWanted())

    def _tell_written(
        self, name: str, event_id: str | None, rows: Sequence[Row], effect: str = ""
    ) -> None:
        if event_id is None:
            self.app.notify(
                f"Feedback {name} accepted but nothing changed (the same verdict is "
                "already recorded, or it is older than the record)",
                title="Unchanged",
            )
            return
        first = rows[-1] if rows else None
        what = named(name)
        also = len(rows) - 1 if what.with_duplicates else 0
        done = what.done.format(
            id=first.id if first is not None else "",
            also=f" with {also} duplicate(s)" if also else "",
        )
        self.app.notify(f"{done}\n{effect}" if effect else done, title="Saved")
        self.state.written(rows)

    # ------------------------------------------------------------ many records

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
        dialog = bulk_dialog(title, steps, [*notes, *ungrouped], grouped=not ungrouped)

        def done(yes: bool | None) -> None:
            if yes:
                self._run("curator-bulk", self._write_many(op, steps, origin))

        self.app.push_screen(dialog, done)

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
        severity: SeverityLevel = "error" if stopped else "warning" if refused else "information"
        self.app.notify("\n".join(lines), title="Bulk action", severity=severity, timeout=12)

    # ------------------------------------------------------------ undoing

    async def _undo_last(self, memory_id: str) -> None:
        store = self.state.store
        if store is None:
            return
        try:
            found = await store.events(memory_id=memory_id, limit=1)
        except StoreError as exc:
            self.app.post_message(StoreFailed(exc))
            return
        if not found or isinstance(found[0], CorruptRow):
            self.app.notify("This record has no event to undo", severity="warning")
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
            self.app.notify(f"Undo refused: {exc}", title="Undo", severity="error")
            return
        target = Target(event_id=event_id)
        inverse = inverse_of(preview)
        dialog = undo_dialog(what, preview, inverse)

        def done(yes: bool | None) -> None:
            if dialog.chose_instead:  # pin or unpin: the layer back, nothing blocked
                memory_id = str(preview[0][0].get("id", ""))
                self.curate(self.state.find(memory_id), inverse)
            elif yes:
                self.write("undo", lambda s: named("undo").call(s, target))

        self.app.push_screen(dialog, done)

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
        dialog = bulk_dialog(title, steps, notes, instead=instead)

        def done(yes: bool | None) -> None:
            if dialog.chose_instead:  # pin or unpin them: the layers back, nothing blocked
                rows = {r.id: r for r in self.state.rows}
                marks = {s.memory_id: r.revision for s in steps
                         if isinstance(r := rows.get(s.memory_id), Memory)}  # fmt: skip
                again = plan(inverse, marks, rows)
                self._run("curator-bulk", self._write_many(inverse, again))
            elif yes:
                self._run("curator-bulk", self._write_many("undo", steps))

        self.app.push_screen(dialog, done)
