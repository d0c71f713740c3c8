"""Marks, bulk actions and undo: the Memories view's writes beyond one key, one record.

``space`` marks a record, ``v`` marks every row the cursor passes, ``ctrl+a``
marks what the filter shows, ``esc`` drops the marks. With marks set, the
curation keys act on every marked record after one preview (``bulk.plan``); each
record is then written with the very operation a single key performs, one pi
event each, and one refusal never stops the others. The events of one bulk
action are journaled in the app's state directory, so the history shows them as
one entry, and one ``u`` undoes them all (``undo_batch``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from textual import work
from textual.binding import Binding, BindingType
from textual.message import Message

from store import CorruptRow, Memory, MemoryStore, Refused, Replaced, StoreError
from store._js import iso
from store.curation import UndoPlan

from ..appstate import Batch
from ..bulk import WORDS, AnyStep, UndoStep, plan
from ..keys import reopen_hint
from ..messages import StatusChanged, StoreFailed
from ..screens.confirm import ConfirmScreen, bulk_dialog, undo_dialog
from ..screens.prompt import PromptScreen
from ..state import DashboardState, Row
from ..text import one_line
from ..widgets.memory_list import MemoryList
from .base import BaseView

StoreCall = Callable[[MemoryStore], Awaitable[str | None]]
DONE = {"pin": "Pinned", "unpin": "Unpinned", "forget": "Forgot", "resolve": "Resolved",
        "adopt": "Adopted", "undo": "Undid"}  # fmt: skip


class MarkingView(BaseView):
    """A view with a memory list whose records can be marked and curated together."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "space",
            "mark",
            "Mark",
            id="memory.mark",
            tooltip="Mark or unmark the record; with marks, p 1-4 d r A act on every mark",
        ),
        Binding(
            "v",
            "range",
            "Range",
            id="memory.range",
            show=False,
            tooltip="Start or end a range: every row the cursor passes is marked",
        ),
        Binding(
            "ctrl+a",
            "mark_all",
            "Mark all",
            id="memory.mark_all",
            show=False,
            tooltip="Mark every record the filter shows",
        ),
    ]

    @dataclass
    class BatchWritten(Message):
        """A bulk action ended: the events written, the rows they changed, the refusals."""

        verb: str
        events: Sequence[str]
        rows: Sequence[Row]
        refused: Sequence[tuple[str, str]]
        unchanged: int
        stopped: str = ""
        """Why the rest was not written (the store could not be written at all), or ""."""
        left: int = 0
        """How many were not written because of it."""

    @dataclass
    class UndoAsked(Message):
        """An undo's preview is ready for the user to confirm (or its refusal to show)."""

        event_id: str
        what: str
        plan: UndoPlan | str

    @dataclass
    class BatchPlanned(Message):
        """What undoing a batch would do, record by record, ready to confirm."""

        batch: Batch
        steps: Sequence[AnyStep]

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(state, id=id)
        self.marks: dict[str, int] = {}
        """Marked record ids, and the revision each had when marked."""
        self._range: tuple[dict[str, int], list[str]] | None = None
        """A range being marked: the marks before it, and the records the cursor has
        passed since, in order (moving back over them unmarks them again)."""
        self.arrived: set[str] = set()
        """Records that arrived (pi wrote them) since marking began: never marked but
        by hand, and counted in a bulk action's preview."""

    @property
    def memory_list(self) -> MemoryList:
        raise NotImplementedError

    def write(self, verb: str, op: StoreCall) -> object:
        """Run one store write (the Memories view's worker)."""
        raise NotImplementedError

    def ask(self, dialog: ConfirmScreen, verb: str, op: StoreCall) -> None:
        """Write ``op`` once the user says yes to ``dialog``."""

        def done(yes: bool | None) -> None:
            if yes:
                self.write(verb, op)

        self.app.push_screen(dialog, done)

    def _show_marks(self) -> None:
        self.memory_list.show_marks(frozenset(self.marks))
        self.post_message(StatusChanged())

    def mark_parts(self) -> list[str]:
        if not self.marks:
            return []
        shown = self.memory_list.index_of
        hidden = sum(1 for memory_id in self.marks if shown(memory_id) is None)
        range_ = " (range: v ends it)" if self._range is not None else ""
        return [f"{len(self.marks)} marked{f', {hidden} hidden by the filter' if hidden else ''}"
                f"{range_}"]  # fmt: skip

    def action_mark(self) -> None:
        row = self.memory_list.highlighted
        if not isinstance(row, Memory):
            self.notify("Only a record can be marked", severity="warning")
            return
        if row.id in self.marks:
            del self.marks[row.id]
        else:
            self.marks[row.id] = row.revision
        self._show_marks()

    def action_range(self) -> None:
        if self._range is None:
            row = self.memory_list.highlighted
            passed = [row.id] if isinstance(row, Memory) and row.id not in self.arrived else []
            self._range = (dict(self.marks), passed)
            self._extend_range()
            self.notify("Range: the rows the cursor passes are marked; v ends it, esc drops it")
        else:
            self._range = None
            self._show_marks()

    def _pass(self, row: Row | None) -> None:
        """The cursor moved to ``row``: the records it passed on the way join the range;
        back onto one it passed, the range shrinks to there. Held by id, so a record that
        arrives or moves meanwhile is never swept in by its position."""
        if self._range is None or row is None:
            return
        _, passed = self._range
        if row.id in passed:
            del passed[passed.index(row.id) + 1 :]
            return
        index_of = self.memory_list.index_of
        rows = self.memory_list.rows
        here = index_of(row.id)
        there = index_of(passed[-1]) if passed else None
        between: Sequence[Row] = ()
        if here is not None and there is not None:
            low, high = sorted((here, there))
            between = rows[low + 1 : high] if here > there else rows[low + 1 : high][::-1]
        taken = set(passed)
        for r in (*between, row):
            if isinstance(r, Memory) and r.id not in self.arrived and r.id not in taken:
                passed.append(r.id)
                taken.add(r.id)

    def _extend_range(self) -> None:
        if self._range is None:
            return
        base, passed = self._range
        revision = {r.id: r.revision for r in map(self.state.find, passed) if isinstance(r, Memory)}
        self.marks = {**base, **{i: revision[i] for i in passed if i in revision}}
        self._show_marks()

    def on_memory_list_highlighted(self, message: MemoryList.Highlighted) -> None:
        if self._range is not None:
            self._pass(self.memory_list.highlighted)
            self._extend_range()

    def note_arrivals(self, ids: frozenset[str]) -> None:
        """Records pi just wrote: while marks exist they are kept out of any range."""
        if self.marks or self._range is not None:
            self.arrived |= ids

    def action_mark_all(self) -> None:
        rows = [r for r in self.memory_list.rows if isinstance(r, Memory)]
        self.marks = {**self.marks, **{r.id: r.revision for r in rows}}
        self._show_marks()
        self.notify(f"{len(self.marks)} marked")

    def drop_marks(self) -> bool:
        """Forget every mark (esc); False when there was none."""
        if not self.marks and self._range is None:
            return False
        self.marks, self._range = {}, None
        self.arrived.clear()
        self._show_marks()
        self.notify("Marks cleared")
        return True

    # ------------------------------------------------------------ writing many

    def bulk(self, verb: str, origin: str = "") -> None:
        """Preview ``verb`` on every marked record, then write them one by one."""
        rows = {r.id: r for r in self.state.rows}
        steps = plan(verb, self.marks, rows)
        op = steps[0].op if steps else verb
        into = f" into {origin}" if op == "adopt" else ""
        title = f"{WORDS.get(op, op).capitalize()}{into}: {len(steps)} marked record(s)?"

        def done(yes: bool | None) -> None:
            if yes:
                self.write_many(op, steps, origin)

        notes = []
        if self.arrived:
            marked = sum(1 for i in self.arrived if i in self.marks)
            notes.append(
                f"{len(self.arrived)} record(s) arrived since marking began; "
                f"{marked or 'none'} of them marked (by hand)."
            )
        ungrouped = self.grouping_notes()
        dialog = bulk_dialog(title, steps, [*notes, *ungrouped], grouped=not ungrouped)
        self.app.push_screen(dialog, done)

    def grouping_notes(self) -> list[str]:
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
            return await store.undo(step.event_id)
        mid, rev = step.memory_id, step.revision
        if step.op in ("pin", "unpin", "forget", "resolve"):
            return await getattr(store, step.op)(mid, expected_revision=rev)  # type: ignore[no-any-return]
        if step.op == "adopt":
            return await store.adopt(mid, origin, expected_revision=rev)
        return await store.feedback(mid, step.op, expected_revision=rev)

    @work(group="write", exit_on_error=False)
    async def write_many(self, verb: str, steps: Sequence[AnyStep], origin: str = "") -> None:
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
        batch_id = await self._begin(store, verb, writing)
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
            except StoreError as exc:  # the store cannot be written: none of the rest is
                stopped, left = str(exc), len(writing) - n
                break
        if batch_id is not None and self.state.remembered is not None:
            self.state.remembered.finish_batch(batch_id, events)
        try:
            rows = await store.memories(list(ids))
        except StoreError:
            rows = []
        self.post_message(self.BatchWritten(verb, events, rows, refused, unchanged, stopped, left))

    async def _begin(self, store: MemoryStore, verb: str, writing: Sequence[AnyStep]) -> str | None:
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
        return remembered.begin_batch(verb, writing[0].op, at, targets, after)

    def on_marking_view_batch_written(self, message: BatchWritten) -> None:
        done = f"{DONE.get(message.verb, 'Wrote')} {len(message.events)}"
        lines = [f"{done}, {len(message.refused)} refused, {message.unchanged} unchanged"]
        if message.stopped:
            lines.append(f"stopped, {message.left} not written: {message.stopped}")
        lines += [f"refused: “{one_line(t, 40)}”: {why}" for t, why in message.refused[:4]]
        if len(message.refused) > 4:
            lines.append(f"…and {len(message.refused) - 4} more")
        self.notify(
            "\n".join(lines),
            title="Bulk action",
            severity="error"
            if message.stopped
            else "warning"
            if message.refused
            else "information",
            timeout=12,
        )
        if message.verb != "undo" and not message.stopped:
            self.marks, self._range = {}, None
            self.arrived.clear()
            self._show_marks()
        self.state.written(message.rows)

    def bulk_with_origin(self, verb: str) -> None:
        """``bulk``, asking first for the origin when the verb is adopt."""
        if verb == "adopt":
            self.ask_origin(lambda origin: self.bulk(verb, origin))
        else:
            self.bulk(verb)

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

    # ------------------------------------------------------------ undoing
    @work(group="undo-lookup", exit_on_error=False)
    async def undo_last(self, memory_id: str) -> None:
        store = self.state.store
        if store is None:
            return
        try:
            found = await store.events(memory_id=memory_id, limit=1)
        except StoreError as exc:
            self.post_message(StoreFailed(exc))
            return
        if not found or isinstance(found[0], CorruptRow):
            self.notify("This record has no event to undo", severity="warning")
            return
        event = found[0]
        self.confirm_undo(event.id, f"its last event ({one_line(event.reason, 60)})")

    def undo_event(self, event_id: str, what: str) -> None:
        """Undo an event after a preview (a request from the history)."""
        if not self.refuse_write():
            self.confirm_undo(event_id, what)

    @work(group="undo-lookup", exit_on_error=False)
    async def confirm_undo(self, event_id: str, what: str) -> None:
        """Preview the undo; the answer comes back as ``UndoAsked``."""
        store = self.state.store
        if store is None:
            return
        try:
            plan: UndoPlan | str = await store.undo_preview(event_id)
        except StoreError as exc:  # upstream's refusal, or why the store could not tell
            plan = str(exc)
        self.post_message(self.UndoAsked(event_id, what, plan))

    def on_marking_view_undo_asked(self, message: UndoAsked) -> None:
        if isinstance(message.plan, str):
            self.notify(f"Undo refused: {message.plan}", title="Undo", severity="error")
            return
        event_id = message.event_id
        self.ask(undo_dialog(message.what, message.plan), "undo", lambda s: s.undo(event_id))

    def undo_batch(self, batch: Batch) -> None:
        """Preview undoing every event of ``batch`` (newest first), then undo them."""
        if not self.refuse_write():
            self.plan_undo(batch)

    @work(group="undo-lookup", exit_on_error=False)
    async def plan_undo(self, batch: Batch) -> None:
        store = self.state.store
        if store is None:
            return
        steps: list[AnyStep] = []
        for event_id in reversed(batch.events):
            memory_id, text = "", ""
            try:
                event = await store.event(event_id)
                if event.after:
                    memory_id = str(event.after[0].get("id", ""))
                    text = str(event.after[0].get("content", ""))
                await store.undo_preview(event_id)
                steps.append(UndoStep(event_id, memory_id, text))
            except StoreError as exc:  # upstream's refusal, or why the store could not tell
                steps.append(UndoStep(event_id, memory_id, text, str(exc)))
        self.post_message(self.BatchPlanned(batch, steps))

    def on_marking_view_batch_planned(self, message: BatchPlanned) -> None:
        batch, steps = message.batch, message.steps
        title = f"Undo the {batch.verb} of {len(batch.events)} records ({batch.at[:16]})?"
        if batch.cut_short:
            title = (
                f"Undo the {batch.verb} cut short ({batch.at[:16]}): the {len(batch.events)} "
                f"of {batch.planned} records it wrote?"
            )

        def done(yes: bool | None) -> None:
            if yes:
                self.write_many("undo", steps)

        self.app.push_screen(bulk_dialog(title, steps), done)

    def refuse_write(self) -> bool:
        """Say why nothing may be written now (the time dial, read-only); True if so."""
        why = self.state.write_refusal()
        if why is not None:
            store = self.state.store
            try:
                if store is not None:
                    store.check_file()
            except Replaced as exc:  # the store's state says so at once, as a poll would
                why += f"; {reopen_hint(self.app)}"
                self.post_message(StoreFailed(exc))
            self.notify(why, title="Nothing written", severity="warning")
        return why is not None
