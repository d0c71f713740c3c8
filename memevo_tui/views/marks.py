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

from store import CorruptRow, Memory, MemoryStore, StoreError
from store._js import iso
from store.curation import UndoPlan

from ..appstate import Batch
from ..bulk import WORDS, Step, plan
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
        steps: Sequence[Step]

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(state, id=id)
        self.marks: dict[str, int] = {}
        """Marked record ids, and the revision each had when marked."""
        self._range: tuple[int, dict[str, int]] | None = None

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
            self._range = (self.memory_list.cursor, dict(self.marks))
            self._extend_range()
            self.notify("Range: the rows the cursor passes are marked; v ends it, esc drops it")
        else:
            self._range = None
            self._show_marks()

    def _extend_range(self) -> None:
        if self._range is None:
            return
        anchor, base = self._range
        low, high = sorted((anchor, self.memory_list.cursor))
        rows = self.memory_list.rows[low : high + 1]
        self.marks = {**base, **{r.id: r.revision for r in rows if isinstance(r, Memory)}}
        self._show_marks()

    def on_memory_list_highlighted(self, message: MemoryList.Highlighted) -> None:
        if self._range is not None:
            self._extend_range()

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

        self.app.push_screen(bulk_dialog(title, steps), done)

    @staticmethod
    async def _one(store: MemoryStore, step: Step, origin: str) -> str | None:
        """One record, as the single key writes it (at the revision it was marked)."""
        mid, rev = step.memory_id, step.revision
        if step.op == "undo":
            return await store.undo(mid)
        if step.op in ("pin", "unpin", "forget", "resolve"):
            return await getattr(store, step.op)(mid, expected_revision=rev)  # type: ignore[no-any-return]
        if step.op == "adopt":
            return await store.adopt(mid, origin, expected_revision=rev)
        return await store.feedback(mid, step.op, expected_revision=rev)

    @work(group="write", exit_on_error=False)
    async def write_many(self, verb: str, steps: Sequence[Step], origin: str = "") -> None:
        """Write each step in turn; a refusal is noted and the next one written."""
        store = self.state.store
        if store is None:
            return
        events: list[str] = []
        refused = [(s.text or s.memory_id, s.refusal) for s in steps if s.refusal]
        unchanged = sum(1 for s in steps if s.unchanged and not s.refusal)
        ids: dict[str, None] = {}
        for step in steps:
            if not step.writes:
                continue
            try:
                event_id = await self._one(store, step, origin)
                if event_id is None:
                    unchanged += 1
                    continue
                events.append(event_id)
                ids.update(dict.fromkeys((await store.event(event_id)).record_ids))
            except StoreError as exc:  # refused or could not run: this one only
                refused.append((step.text or step.memory_id, str(exc)))
        try:
            rows = await store.memories(list(ids))
        except StoreError:
            rows = []
        self.post_message(self.BatchWritten(verb, events, rows, refused, unchanged))

    def on_marking_view_batch_written(self, message: BatchWritten) -> None:
        remembered = self.state.remembered
        if remembered is not None:
            remembered.add_batch(message.verb, iso(self.state.clock()), message.events)
        done = f"{DONE.get(message.verb, 'Wrote')} {len(message.events)}"
        lines = [f"{done}, {len(message.refused)} refused, {message.unchanged} unchanged"]
        lines += [f"refused: “{one_line(t, 40)}”: {why}" for t, why in message.refused[:4]]
        if len(message.refused) > 4:
            lines.append(f"…and {len(message.refused) - 4} more")
        self.notify(
            "\n".join(lines),
            title="Bulk action",
            severity="warning" if message.refused else "information",
            timeout=12,
        )
        if message.verb != "undo":
            self.marks, self._range = {}, None
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
        steps = []
        for event_id in reversed(batch.events):
            try:
                event = await store.event(event_id)
                text = str(event.after[0].get("content", "")) if event.after else event_id
                await store.undo_preview(event_id)
                steps.append(Step(event_id, text, "undo", 0))
            except StoreError as exc:  # upstream's refusal, or why the store could not tell
                steps.append(Step(event_id, event_id, "undo", 0, str(exc)))
        self.post_message(self.BatchPlanned(batch, steps))

    def on_marking_view_batch_planned(self, message: BatchPlanned) -> None:
        batch, steps = message.batch, message.steps
        title = f"Undo the {batch.verb} of {len(batch.events)} records ({batch.at[:16]})?"

        def done(yes: bool | None) -> None:
            if yes:
                self.write_many("undo", steps)

        self.app.push_screen(bulk_dialog(title, steps), done)

    def refuse_write(self) -> bool:
        """Say why nothing may be written now (the time dial, read-only); True if so."""
        why = self.state.write_refusal()
        if why is not None:
            if self.state.store is not None and self.state.store.file_problem() is not None:
                why += f"; {reopen_hint(self.app)}"
            self.notify(why, title="Nothing written", severity="warning")
        return why is not None
