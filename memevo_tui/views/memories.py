"""The Memories view: the filter box, the memory list and the detail pane, and curation.

Every curation write of the dashboard runs here, whichever view asked for it
(Search, Recall and History ask through the main screen). Follow one key, ``p``:

1. ``MemoryList`` binds ``p`` to ``curate('pin')`` and posts ``CurationRequested``;
2. ``on_memory_list_curation_requested`` hands the row to ``curate``, which checks
   it and picks the store call (pin or unpin, at the revision on screen);
3. ``write``, a worker, runs that call and reads back the records it changed;
4. it answers with ``Written`` (or ``WriteFailed``), nested below;
5. ``on_memories_view_written`` toasts, and puts the rows into the shared state,
   which tells every view; ``state_changed`` repaints them in place here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.worker import Worker, WorkerState

from store import Changed, CorruptRow, Memory, Refused, Replaced, StoreError

from ..bulk import BULK_VERBS, FEEDBACK
from ..commands import SORTS
from ..export import BadExport, ExportRequest, Format, atomic_file, export, format_for
from ..messages import ReloadWanted, StatusChanged, StoreFailed
from ..screens.confirm import (
    conflict_dialog,
    forget_dialog,
    incorrect_dialog,
)
from ..screens.correct import edit_correction
from ..screens.menu import BACKUP, export_menu, sort_menu
from ..screens.prompt import export_prompt
from ..state import Change, DashboardState, Dialed, Failed, LiveChanged, OwnWrite, Reloaded, Row
from ..text import one_line
from ..view import SORT_KEYS
from ..widgets.memory_browser import MemoryBrowser
from ..widgets.memory_list import MemoryList
from .marks import MarkingView, StoreCall

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


class MemoriesView(MarkingView):
    """Every record on one line, the highlighted one in full, and the curation keys."""

    FOCUS = "#memory-list"
    BOX = "#filter"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "sort_menu", "Sort", id="memory.sort", tooltip="Sort by a column (a menu)"),
        Binding(
            "O",
            "reverse_sort",
            "Reverse",
            id="memory.reverse_sort",
            show=False,
            tooltip="Reverse the sort order",
        ),
        Binding(
            "a",
            "toggle_hidden",
            "All",
            id="memory.toggle_hidden",
            show=False,
            tooltip="Show or hide forgotten and conflicted records",
        ),
        Binding(
            "ctrl+e",
            "export",
            "Export",
            id="memory.export",
            show=False,
            tooltip="Export the marked records, or else those the filter shows, to a file",
        ),
    ]

    @dataclass
    class Written(Message):
        """A curation write committed (``event_id`` None: accepted, nothing recorded)."""

        label: str
        event_id: str | None
        rows: Sequence[Row]

    @dataclass
    class Exported(Message):
        """An export finished (``error`` set: nothing was written under ``path``)."""

        path: Path
        summary: str
        error: str | None = None

    @dataclass
    class WriteFailed(Message):
        """A curation write was refused or could not run; nothing was written."""

        label: str
        error: StoreError

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(state, id=id)
        self.conflict_mark: Memory | None = None
        self._writing = 0  # single-record writes not yet answered
        self._waiting: deque[tuple[str, str]] = deque()  # keys pressed meanwhile

    def compose(self) -> ComposeResult:
        yield MemoryBrowser(self.state, sorts=SORTS)

    @property
    def browser(self) -> MemoryBrowser:
        return self.query_one(MemoryBrowser)

    @property
    def memory_list(self) -> MemoryList:
        return self.browser.memory_list

    @property
    def highlighted(self) -> Row | None:
        return self.memory_list.highlighted

    def on_mount(self) -> None:
        self.memory_list.empty_text = "Loading…"

    # ------------------------------------------------------------ the shared state

    def state_changed(self, change: Change) -> None:
        browser, memory_list = self.browser, self.memory_list
        if isinstance(change, Dialed):
            browser.apply()
        elif isinstance(change, Reloaded):
            memory_list.empty_text = "No memory matches the filter."
            browser.apply()
            if not change.partial and change.corrupt:
                self.notify(
                    f"{change.corrupt} corrupt row(s) flagged at the top of the list",
                    severity="warning",
                )
        elif isinstance(change, OwnWrite):
            browser.put(change.rows)
        elif isinstance(change, LiveChanged):
            self.note_arrivals(change.added)
            browser.put(change.rows)
            memory_list.flash({r.id for r in change.rows})
        elif isinstance(change, Failed) and change.message:
            memory_list.empty_text = change.message
            memory_list.refresh()

    def on_memory_browser_changed(self, message: MemoryBrowser.Changed) -> None:
        message.stop()
        self.post_message(StatusChanged())

    def status_parts(self) -> list[str]:
        state = self.state
        view = state.view
        arrow = "▼" if view.descending else "▲"
        parts = [
            f"{len(self.memory_list.rows):,} shown of {state.total:,}"
            + (" (loading the rest…)" if state.partial else ""),
            *self.mark_parts(),
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
        return super().busy or self.browser.busy

    # ------------------------------------------------------------ what the list shows

    def action_toggle_hidden(self) -> None:
        show = self.browser.toggle_hidden()
        self.notify(f"{'Showing' if show else 'Hiding'} forgotten and conflicted records")

    def action_sort_menu(self) -> None:
        view = self.state.view
        keys = [(key, label) for key, (label, _) in SORT_KEYS.items()]

        def picked(key: str | None) -> None:
            if key == view.sort:
                self.browser.reverse_sort()
            elif key is not None:
                self.browser.sort_by(key)

        self.app.push_screen(sort_menu(keys, view.sort, view.descending), picked)

    def action_reverse_sort(self) -> None:
        self.browser.reverse_sort()

    def sort_by(self, key: str) -> None:
        self.browser.sort_by(key)

    @property
    def filtered(self) -> bool:
        """A filter is set, or records opened by another view are shown (esc clears)."""
        return bool(self.state.view.query) or self.browser.opened_for

    def clear_filter(self) -> None:
        self.browser.clear_filter()

    def open_for(self, query: str) -> None:
        """Show records another view asks for (esc brings back the view as it was)."""
        self.browser.open_for(query)

    def leave(self) -> bool:
        """esc: drop a conflict mark, leave the filter box, drop the marks, then clear the
        filter, one at a time."""
        return self.drop_conflict_mark() or self.leave_box() or self.drop_marks() or super().leave()

    def drop_conflict_mark(self) -> bool:
        """Forget a pending conflict mark (esc); False when there was none."""
        if self.conflict_mark is None:
            return False
        self.conflict_mark = None
        self.notify("Conflict mark cleared")
        self.post_message(StatusChanged())
        return True

    def reveal(self, memory_id: str) -> bool:
        """Put the cursor on a record, clearing what hides it (a request from another view)."""
        problem = self.browser.reveal(memory_id)
        if problem is not None:
            self.notify(problem, severity="warning")
        return problem is None

    # ------------------------------------------------------------ export

    def action_export(self) -> None:
        """Ask what the export is for (to share, or a backup) and where it goes, then
        export the marked records (or the listed ones)."""
        if self.state.store is None:
            self.notify("The store is still opening", severity="warning")
            return
        ids = frozenset(self.marks) or frozenset(r.id for r in self.memory_list.rows)
        what = "marked" if self.marks else "listed"
        if not ids:
            self.notify("Nothing to export: no record is listed", severity="warning")
            return

        def kind(fmt: str | None) -> None:
            if fmt is None:
                return

            def chosen(name: str | None) -> None:
                if name and name.strip():
                    path = Path(name.strip()).expanduser().absolute()
                    self.export_to(path, ids, what, format_for(path, fmt))

            self.app.push_screen(export_prompt(len(ids), what, self.state.now(), fmt), chosen)

        self.app.push_screen(export_menu(len(ids), what), kind)

    @work(group="export", exit_on_error=False)
    async def export_to(self, path: Path, ids: frozenset[str], what: str, fmt: Format) -> None:
        backup = fmt == BACKUP
        request = ExportRequest(format=fmt, ids=ids, with_events=backup, with_sources=backup)
        try:
            store = await self.state.open()
            with atomic_file(path) as handle:
                result = await export(store, request, handle)
        except (StoreError, BadExport) as exc:
            self.post_message(self.Exported(path, "", str(exc)))
            return
        except FileExistsError:
            self.post_message(self.Exported(path, "", "it already exists; choose another name"))
            return
        except OSError as exc:
            self.post_message(self.Exported(path, "", exc.strerror or str(exc)))
            return
        self.post_message(self.Exported(path, f"{result.summary} ({what}, {fmt})"))

    def on_memories_view_exported(self, message: Exported) -> None:
        if message.error:
            self.notify(
                f"{one_line(str(message.path))}: {message.error}",
                title="Not exported",
                severity="error",
                timeout=8,
            )
        else:
            self.notify(
                f"{message.summary} to {one_line(str(message.path))}", title="Exported", timeout=8
            )

    # ------------------------------------------------------------ curation

    def on_memory_list_curation_requested(self, message: MemoryList.CurationRequested) -> None:
        message.stop()
        self.curate(message.row, message.verb, many=True)

    def curate(self, row: Row | None, verb: str, *, many: bool = False) -> None:
        """Apply a curation verb to ``row`` (from this list, or asked by another view);
        with ``many`` and records marked, to every marked record."""
        if many and self.marks and verb in BULK_VERBS:
            if not self.refuse_write():
                self.bulk_with_origin(verb)
            return
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
        if self.refuse_write():
            return
        if self._writing:  # p p: the second acts on the record as the first leaves it
            self._waiting.append((row.id, verb))
            return
        memory_id, revision = row.id, row.revision
        if verb == "pin":
            op = "unpin" if row.pinned else "pin"
            self.write(op, lambda s: getattr(s, op)(memory_id, expected_revision=revision))
        elif verb == "incorrect":
            self.ask(
                incorrect_dialog(row.content, len(self.state.duplicates(row))),
                verb,
                lambda s: s.feedback(memory_id, verb, expected_revision=revision),
            )
        elif verb in FEEDBACK:
            self.write(verb, lambda s: s.feedback(memory_id, verb, expected_revision=revision))
        elif verb == "resolve":
            self.write(verb, lambda s: s.resolve(memory_id, expected_revision=revision))
        elif verb == "forget":
            self.ask(
                forget_dialog(row.content),
                verb,
                lambda s: s.forget(memory_id, expected_revision=revision),
            )
        elif verb == "correct":
            self._edit_correction(row)
        elif verb == "conflict":
            self._mark_conflict(row)
        elif verb == "undo":
            self.undo_last(row.id)
        elif verb == "adopt":

            def adopt(origin: str) -> None:
                self.write(
                    "adopt", lambda s: s.adopt(memory_id, origin, expected_revision=revision)
                )

            self.ask_origin(adopt)

    def _edit_correction(self, row: Memory) -> None:
        def done(text: str | None) -> None:
            if text is None:
                return
            if text.strip() == row.content.strip():
                self.notify("Text unchanged: nothing written")
                return
            self.write("correct", lambda s: s.correct(row.id, text, expected_revision=row.revision))

        edit_correction(self.app, row.id, row.content, done)

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
        self.ask(
            conflict_dialog(mark.content, row.content),
            "conflict",
            lambda s: s.conflict(mark.id, row.id, expected_revision=mark.revision),
        )

    def write(self, verb: str, op: StoreCall) -> None:
        """Run one store write; a curation key pressed meanwhile waits for its answer."""
        self._writing += 1
        self._write(verb, op)

    def _wrote(self) -> None:
        """A write was answered (its rows are in the state): run a key that waited."""
        self._writing = max(0, self._writing - 1)
        if not self._writing and self._waiting:
            memory_id, verb = self._waiting.popleft()
            self.curate(self.state.find(memory_id), verb)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A write that ended without an answer (it crashed, or was cancelled) still
        lets the keys after it run: they are dropped, as after a refusal."""
        worker = event.worker
        ended = event.state in (WorkerState.ERROR, WorkerState.CANCELLED)
        if worker.group == "write-one" and ended:
            self._waiting.clear()
            self._wrote()
            if event.state == WorkerState.ERROR:
                self.notify(f"The write failed: {worker.error}", severity="error")

    @work(group="write-one", exit_on_error=False)
    async def _write(self, verb: str, op: StoreCall) -> None:
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
        self._waiting.clear()  # refused: the keys pressed after it assumed it was written
        self._tell_failed(message)
        self._wrote()

    def _tell_failed(self, message: WriteFailed) -> None:
        error = message.error
        if isinstance(error, Changed):
            title = "Changed under you"
        else:
            title = "Refused" if isinstance(error, Refused) else f"Not written: {error.cause}"
        if isinstance(error, Replaced):  # the app says so, and keeps saying it
            self.post_message(StoreFailed(error))
            return
        self.notify(f"{message.label}: {error}", title=title, severity="error", timeout=8)
        if isinstance(error, Changed):
            self.post_message(ReloadWanted())

    def on_memories_view_written(self, message: Written) -> None:
        self._tell_written(message)
        self._wrote()

    def _tell_written(self, message: Written) -> None:
        if message.event_id is None:
            self.notify(
                f"Feedback {message.label} accepted but nothing changed (the same verdict is "
                "already recorded, or it is older than the record)",
                title="Unchanged",
            )
            return
        first = message.rows[-1] if message.rows else None
        if message.label == "incorrect":
            also = len(message.rows) - 1
            text = "Marked incorrect: quarantined" + (f" with {also} duplicate(s)" if also else "")
            self.notify(f"{text}; r resolves it, 3 marks it accurate", title="Saved")
        else:
            target = f" · {first.id}" if first is not None else ""
            self.notify(f"{DONE_LABELS.get(message.label, message.label)}{target}", title="Saved")
        self.state.written(message.rows)
