"""The Memories view: the filter box, the memory list and the detail pane, and curation.

Every curation write of the dashboard runs here, whichever view asked for it
(the Search tab and the history ask through the App). Follow one key, ``p``:

1. ``MemoryList`` binds ``p`` to ``curate('pin')`` and posts ``CurationRequested``;
2. ``on_memory_list_curation_requested`` hands the row to ``curate``, which checks
   it and picks the store call (pin or unpin, at the revision on screen);
3. ``write``, a worker, runs that call and reads back the records it changed;
4. it answers with ``Written`` (or ``WriteFailed``), nested below;
5. ``on_memories_view_written`` toasts, and puts the rows into the shared state,
   which tells every view; ``state_changed`` repaints them in place here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input

from store import Changed, CorruptRow, Memory, MemoryStore, Refused, StoreError
from store.curation import UndoPlan

from ..commands import SORTS
from ..messages import ReloadWanted, StatusChanged, StoreFailed
from ..screens.confirm import conflict_dialog, forget_dialog, undo_dialog
from ..screens.correct import CorrectScreen
from ..state import Change, DashboardState, Failed, LiveChanged, OwnWrite, Reloaded, Row
from ..text import one_line
from ..view import DEFAULT_DESCENDING, apply_view
from ..widgets.debounced_input import DebouncedInput
from ..widgets.memory_detail import MemoryDetail
from ..widgets.memory_list import MemoryList
from ..widgets.virtual_list import VirtualList
from .base import BaseView

FEEDBACK = ("useful", "unhelpful", "accurate", "incorrect")
DONE_LABELS = {
    "pin": "Pinned",
    "unpin": "Unpinned",
    "forget": "Forgotten",
    "correct": "Corrected",
    "resolve": "Resolved as confirmed",
    "conflict": "Marked as conflicting",
    "undo": "Undone",
    **{v: f"Feedback recorded: {v}" for v in FEEDBACK},
}
StoreCall = Callable[[MemoryStore], Awaitable[str | None]]


class MemoriesView(BaseView):
    """Every record on one line, the highlighted one in full, and the curation keys."""

    FOCUS = "#memory-list"
    FILTER_DELAY = 0.12
    """Seconds of typing pause before the filter applies."""

    @dataclass
    class Written(Message):
        """A curation write committed (``event_id`` None: accepted, nothing recorded)."""

        label: str
        event_id: str | None
        rows: Sequence[Row]

    @dataclass
    class WriteFailed(Message):
        """A curation write was refused or could not run; nothing was written."""

        label: str
        error: StoreError

    @dataclass
    class UndoAsked(Message):
        """An undo's preview is ready for the user to confirm (or its refusal to show)."""

        event_id: str
        what: str
        plan: UndoPlan | str

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(state, id=id)
        self.conflict_mark: Memory | None = None

    def compose(self) -> ComposeResult:
        yield DebouncedInput(
            delay=self.FILTER_DELAY,
            placeholder="/ filter: words, kind:fact state:dormant origin:… is:pinned",
            id="filter",
        )
        with Horizontal(id="main", classes="split"):
            yield MemoryList(id="memory-list")
            yield MemoryDetail(id="memory-detail", load_events=self.state.record_events)

    @property
    def memory_list(self) -> MemoryList:
        return self.query_one("#memory-list", MemoryList)

    def on_mount(self) -> None:
        self.memory_list.empty_text = "Loading…"

    # ------------------------------------------------------------ the shared state

    def state_changed(self, change: Change) -> None:
        memory_list = self.memory_list
        if isinstance(change, Reloaded):
            memory_list.empty_text = "No memory matches the filter."
            self.apply()
            if not change.partial and change.corrupt:
                self.notify(
                    f"{change.corrupt} corrupt row(s) flagged at the top of the list",
                    severity="warning",
                )
        elif isinstance(change, OwnWrite):
            self._put(change.rows)
        elif isinstance(change, LiveChanged):
            if change.full:
                self.apply()
            else:
                self._put(change.rows)
            memory_list.flash({r.id for r in change.rows})
        elif isinstance(change, Failed) and change.message:
            memory_list.empty_text = change.message
            memory_list.refresh()

    def apply(self) -> None:
        """Filter and sort every row by the view settings, keeping the cursor's record."""
        state = self.state
        rows, parsed = apply_view(state.rows, state.view, state.haystacks)
        memory_list = self.memory_list
        memory_list.sort_key = state.view.sort
        memory_list.sort_descending = state.view.descending
        memory_list.set_rows(rows)
        if parsed.errors:
            self.notify("; ".join(parsed.errors), title="Filter", severity="warning")
        self.post_message(StatusChanged())

    def _put(self, rows: Sequence[Row]) -> None:
        """Put changed records in place: the list keeps its order and its cursor."""
        memory_list = self.memory_list
        visible_now, _ = apply_view(rows, self.state.view, self.state.haystacks)
        still = {r.id for r in visible_now}
        needs_view = False
        for r in rows:
            if r.id in still:
                if not memory_list.replace_row(r.id, r):
                    needs_view = True
            elif any(x.id == r.id for x in memory_list.rows):
                needs_view = True
        if needs_view:
            self.apply()
        else:
            self.post_message(StatusChanged())

    def status_parts(self) -> list[str]:
        state = self.state
        view = state.view
        shown = len(self.memory_list.rows)
        arrow = "▼" if view.descending else "▲"
        parts = [
            f"{shown:,} shown of {state.total:,}"
            + (" (loading the rest…)" if state.partial else ""),
            f"sort {view.sort} {arrow}",
            "forgotten/conflicted shown" if view.show_hidden else "forgotten/conflicted hidden (a)",
        ]
        if view.query:
            parts.append(f"filter: {view.query}")
        if self.conflict_mark is not None:
            parts.append(f"conflict mark: {self.conflict_mark.id}")
        return parts

    @property
    def busy(self) -> bool:
        box, detail = self.query_one(DebouncedInput), self.query_one(MemoryDetail)
        return (
            super().busy or box.pending or not detail.caught_up_with(self.memory_list.highlighted)
        )

    # ------------------------------------------------------------ settings

    def _set_view(self, **changes: str | bool) -> None:
        self.state.set_view(**changes)  # type: ignore[arg-type]
        self.apply()

    def toggle_hidden(self) -> None:
        show = not self.state.view.show_hidden
        self._set_view(show_hidden=show)
        self.notify(
            "Showing forgotten and conflicted records"
            if show
            else "Hiding forgotten and conflicted records"
        )

    def cycle_sort(self) -> None:
        view = self.state.view
        index = SORTS.index(view.sort) if view.sort in SORTS else -1
        self.sort_by(SORTS[(index + 1) % len(SORTS)])

    def sort_by(self, key: str) -> None:
        self._set_view(sort=key, descending=key in DEFAULT_DESCENDING)

    def reverse_sort(self) -> None:
        self._set_view(descending=not self.state.view.descending)

    def on_virtual_list_header_clicked(self, message: VirtualList.HeaderClicked) -> None:
        if message.source.id != "memory-list" or message.column not in SORTS:
            return
        if message.column == self.state.view.sort:
            self.reverse_sort()
        else:
            self.sort_by(message.column)

    def focus_filter(self) -> None:
        self.focus_now(self.query_one("#filter", Input))

    def clear_filter(self) -> None:
        self.query_one("#filter", Input).value = ""
        self._set_view(query="")

    def show_query(self, query: str, *, show_hidden: bool) -> None:
        """Filter by ``query`` (a request from another view)."""
        self.query_one("#filter", Input).value = query
        self._set_view(query=query, show_hidden=show_hidden)

    def on_debounced_input_settled(self, event: DebouncedInput.Settled) -> None:
        event.stop()
        self._set_view(query=event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._set_view(query=event.value)
        self.focus_now(self.memory_list)

    def leave(self) -> bool:
        if self.conflict_mark is not None:
            self.conflict_mark = None
            self.notify("Conflict mark cleared")
            self.post_message(StatusChanged())
            return True
        if self.query_one("#filter", Input).has_focus:
            self.focus_now(self.memory_list)
            return True
        return False

    def reveal(self, memory_id: str) -> bool:
        """Put the cursor on a record, clearing what hides it (a request from another view)."""
        row = self.state.find(memory_id)
        if row is None:
            self.notify(f"{memory_id} is no longer in the store", severity="warning")
            return False
        memory_list = self.memory_list
        if not any(r.id == memory_id for r in memory_list.rows):
            hidden = isinstance(row, Memory) and not row.active
            self.query_one("#filter", Input).value = ""
            self._set_view(query="", show_hidden=self.state.view.show_hidden or hidden)
        index = next((i for i, r in enumerate(memory_list.rows) if r.id == memory_id), None)
        if index is None:  # not expected: the view was just opened up to show it
            self.notify(f"{memory_id} is not in the memory list", severity="warning")
            return False
        memory_list.cursor = index
        return True

    # ------------------------------------------------------------ the detail pane

    def on_memory_list_highlighted(self, message: MemoryList.Highlighted) -> None:
        message.stop()
        self.query_one(MemoryDetail).follow(message.row)

    # ------------------------------------------------------------ curation

    def on_memory_list_curation_requested(self, message: MemoryList.CurationRequested) -> None:
        message.stop()
        self.curate(message.row, message.verb)

    def refuse_if_read_only(self) -> bool:
        if self.state.read_only:
            self.notify(
                f"Read-only ({self.state.read_only_reason}): nothing was written",
                title="Read-only",
                severity="warning",
            )
            return True
        return False

    def curate(self, row: Row | None, verb: str) -> None:
        """Apply a curation verb to ``row`` (from this list, or asked by another view)."""
        if row is None:
            self.notify("No memory selected", severity="warning")
            return
        if isinstance(row, CorruptRow):
            self.notify(
                f"{one_line(row.id)} is a corrupt row: it is shown, never acted upon",
                severity="error",
            )
            return
        if self.state.store is None:
            self.notify("The store is still opening", severity="warning")
            return
        if self.refuse_if_read_only():
            return
        memory_id, revision = row.id, row.revision
        if verb == "pin":
            op = "unpin" if row.pinned else "pin"
            self.write(op, lambda s: getattr(s, op)(memory_id, expected_revision=revision))
        elif verb in FEEDBACK:
            self.write(verb, lambda s: s.feedback(memory_id, verb, expected_revision=revision))
        elif verb == "resolve":
            self.write(verb, lambda s: s.resolve(memory_id, expected_revision=revision))
        elif verb == "forget":
            self._confirm_forget(row)
        elif verb == "correct":
            self._edit_correction(row)
        elif verb == "conflict":
            self._mark_conflict(row)
        elif verb == "undo":
            self.undo_last(row.id)

    def _confirm_forget(self, row: Memory) -> None:
        def done(yes: bool | None) -> None:
            if yes:
                self.write("forget", lambda s: s.forget(row.id, expected_revision=row.revision))

        self.app.push_screen(forget_dialog(row.content), done)

    def _edit_correction(self, row: Memory) -> None:
        def done(text: str | None) -> None:
            if text is None:
                return
            if text.strip() == row.content.strip():
                self.notify("Text unchanged: nothing written")
                return
            self.write("correct", lambda s: s.correct(row.id, text, expected_revision=row.revision))

        self.app.push_screen(CorrectScreen(row.id, row.content), done)

    def _mark_conflict(self, row: Memory) -> None:
        mark = self.conflict_mark
        if mark is None or mark.id == row.id:
            self.conflict_mark = row
            self.notify(
                "Marked for conflict: select the contradicting record (same origin) and "
                "press c again; esc cancels"
            )
            self.post_message(StatusChanged())
            return
        self.conflict_mark = None
        self.post_message(StatusChanged())

        def done(yes: bool | None) -> None:
            if yes:
                self.write(
                    "conflict",
                    lambda s: s.conflict(mark.id, row.id, expected_revision=mark.revision),
                )

        self.app.push_screen(conflict_dialog(mark.content, row.content), done)

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
        if not self.refuse_if_read_only():
            self.confirm_undo(event_id, what)

    @work(group="undo-lookup", exit_on_error=False)
    async def confirm_undo(self, event_id: str, what: str) -> None:
        """Preview the undo; the answer comes back as ``UndoAsked``."""
        store = self.state.store
        if store is None:
            return
        try:
            plan: UndoPlan | str = await store.undo_preview(event_id)
        except Refused as exc:
            plan = str(exc)
        except StoreError as exc:
            self.post_message(self.WriteFailed("undo", exc))
            return
        self.post_message(self.UndoAsked(event_id, what, plan))

    def on_memories_view_undo_asked(self, message: UndoAsked) -> None:
        if isinstance(message.plan, str):
            self.notify(f"Undo refused: {message.plan}", title="Undo", severity="error")
            return
        event_id = message.event_id

        def done(yes: bool | None) -> None:
            if yes:
                self.write("undo", lambda s: s.undo(event_id))

        self.app.push_screen(undo_dialog(message.what, message.plan), done)

    @work(group="write", exit_on_error=False)
    async def write(self, verb: str, op: StoreCall) -> None:
        """Run one store write and read back the records it changed."""
        store = self.state.store
        if store is None:
            return
        try:
            event_id = await op(store)
            rows: list[Row] = []
            if event_id is not None:
                event = await store.event(event_id)
                rows = await store.memories(event.record_ids)
        except StoreError as exc:  # refused, read-only, busy: nothing was written
            self.post_message(self.WriteFailed(verb, exc))
            return
        self.post_message(self.Written(verb, event_id, rows))

    def on_memories_view_write_failed(self, message: WriteFailed) -> None:
        error = message.error
        if isinstance(error, Changed):
            title = "Changed under you"
        else:
            title = "Refused" if isinstance(error, Refused) else f"Not written: {error.cause}"
        self.notify(f"{message.label}: {error}", title=title, severity="error", timeout=8)
        if isinstance(error, Changed):
            self.post_message(ReloadWanted())

    def on_memories_view_written(self, message: Written) -> None:
        if message.event_id is None:
            self.notify(
                f"Feedback {message.label} accepted but nothing changed (the same verdict is "
                "already recorded, or it is older than the record)",
                title="Unchanged",
            )
            return
        first = message.rows[-1] if message.rows else None
        target = f" · {first.id}" if first is not None else ""
        self.notify(f"{DONE_LABELS.get(message.label, message.label)}{target}", title="Saved")
        self.state.written(message.rows)
