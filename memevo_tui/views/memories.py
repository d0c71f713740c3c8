"""The Memories view: the filter box, the memory list and the detail pane, and curation.

A curation key here (or in Search, Recall and Review, through the main screen)
reaches ``curate``, which hands the record, or the marked records, to the Curator
(``curator.py``), which writes them; the rows it wrote come back through the shared
state, and ``state_changed`` repaints them in place. This view keeps the marks
(``marks.py``) and a pending pair's first record (``c``, then ``c`` on the other: conflict).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message

from store import Memory, StoreError

from ..core.state import (
    Change,
    DashboardState,
    Dialed,
    Failed,
    LiveChanged,
    OwnWrite,
    Reloaded,
    Replayed,
    Row,
    Scoped,
)
from ..core.text import one_line
from ..core.verbs import Verb, named
from ..core.view import BY_RECALL_LOG, SORT_KEYS, SORTS, parse_filter
from ..dialogs.menu import BACKUP, export_menu, sort_menu
from ..dialogs.prompt import export_prompt
from ..widgets.memory_browser import MemoryBrowser
from ..widgets.memory_detail import MemoryDetail
from ..widgets.memory_list import MemoryList
from ..widgets.messages import StatusChanged
from .marks import MarkingView

if TYPE_CHECKING:  # export is imported when first used
    from ..core.export import Format


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
    class Exported(Message):
        """An export finished (``error`` set: nothing was written under ``path``)."""

        path: Path
        summary: str
        error: str | None = None

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(state, id=id)
        self._total_for: tuple[str, int, int] | None = None
        self._total = 0
        self.pair_mark: tuple[Memory, Verb] | None = None
        """A verb that takes a pair, and its first record, marked (``c``)."""
        self._first_page = False
        """A first screenful is shown (the newest rows inserted), the rest loading."""

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

    def activated(self) -> None:
        # the recall log may have come since (pi's sessions replayed while hidden)
        for detail in self.query(MemoryDetail):
            detail.show_recall_log()

    def state_changed(self, change: Change) -> None:
        browser, memory_list = self.browser, self.memory_list
        if isinstance(change, Dialed):
            browser.apply()
        elif isinstance(change, Reloaded):
            # The first screenful is the newest rows inserted, not the list's top: with
            # the cursor left on its first row, the full list opens at its own top
            # rather than following that record down (at 100,000 records, to row 63).
            top = self._first_page and not change.partial and memory_list.cursor == 0
            self._first_page = change.partial
            browser.apply(reloaded=True, top=top)
            if not change.partial and change.corrupt:
                self.notify(
                    f"{change.corrupt} corrupt row(s) flagged at the top of the list",
                    severity="warning",
                )
        elif isinstance(change, OwnWrite):
            browser.put(change.rows)
            undid = change.bulk and named(change.bulk).asks == "event"
            if change.bulk and not undid and not change.stopped:
                self.clear_marks()  # written: the marks have done their work
        elif isinstance(change, LiveChanged):
            self.note_arrivals(change.added)
            was_at, scrolled = memory_list.cursor, round(memory_list.scroll_offset.y)
            browser.put(change.rows)
            memory_list.flash({r.id for r in change.rows})
            if memory_list.cursor > was_at:  # rows came in above it: the view holds still
                above = [memory_list.index_of(i) for i in change.added]
                memory_list.new_above += sum(1 for at in above if at is not None
                                             and at < memory_list.cursor)  # fmt: skip
                memory_list.hold_still(scrolled + memory_list.cursor - was_at)
                self.post_message(StatusChanged())
        elif isinstance(change, Scoped):
            browser.apply()
            self.post_message(StatusChanged())
        elif isinstance(change, Replayed):
            view = browser.view
            if view.sort in BY_RECALL_LOG or parse_filter(view.query).injected:
                browser.apply()  # sorted or filtered by the recall log, known now
            for detail in self.query(MemoryDetail):  # the recall log, as soon as known
                detail.show_recall_log()
        elif isinstance(change, Failed) and change.message:
            memory_list.empty_text = change.message
            memory_list.refresh()

    def on_memory_browser_changed(self, message: MemoryBrowser.Changed) -> None:
        message.stop()
        self.post_message(StatusChanged())

    def status_parts(self) -> list[str]:
        state = self.state
        view = self.browser.view
        arrow = "▼" if view.descending else "▲"
        # of the records there are, or were at the dial's moment (the toast's count)
        total = state.total if state.partial else self._scoped_total()
        scoped = "" if state.scope.everything else f" in {state.scope.name}"
        parts = [
            f"{len(self.memory_list.rows):,} shown of {total:,}{scoped}"
            + (" (loading the rest…)" if state.partial else ""),
            *self.mark_parts(),
            f"sort {view.sort} {arrow}",
            "forgotten/conflicted shown" if view.show_hidden else "forgotten/conflicted hidden (a)",
        ]
        self.said_new_above = bool(self.memory_list.new_above)
        if self.said_new_above:
            parts.append(f"{self.memory_list.new_above:,} new above (g: go to them)")
        if view.query:
            parts.append(f"filter: {view.query}")
        if self.pair_mark is not None:
            first, what = self.pair_mark
            parts.append(f"{what.name} mark: {first.id}")
        return parts

    @property
    def busy(self) -> bool:
        return super().busy or self.browser.busy

    # ------------------------------------------------------------ what the list shows

    def action_toggle_hidden(self) -> None:
        show = self.browser.toggle_hidden()
        self.notify(f"{'Showing' if show else 'Hiding'} forgotten and conflicted records")

    def action_sort_menu(self) -> None:
        view = self.browser.view
        keys = [(key, label) for key, (label, _) in SORT_KEYS.items()]

        def picked(key: str | None) -> None:
            if key == view.sort:
                self.browser.reverse_sort()
            elif key is not None:
                self.sort_by(key)

        self.app.push_screen(sort_menu(keys, view.sort, view.descending), picked)

    def _scoped_total(self) -> int:
        """How many records the project scope holds (counted once per scope and load)."""
        state = self.state
        if state.scope.everything:
            return len(state.rows)
        key = (state.scope.project, len(state.rows), id(state.rows))
        if self._total_for != key:
            self._total_for = key
            self._total = len(self.browser.in_scope(state.rows))
        return self._total

    def action_reverse_sort(self) -> None:
        self.browser.reverse_sort()

    def sort_by(self, key: str) -> None:
        if key in BY_RECALL_LOG and self.state.injections is None:
            self.notify(
                "This sort reads each record's recall log, known once pi's sessions are "
                "replayed (they are replayed when the store loads, if pi's session folder "
                "is there)",
                severity="warning",
            )
            return
        self.browser.sort_by(key)

    @property
    def filtered(self) -> bool:
        """A filter is set, or records opened by another view are shown (esc clears)."""
        return bool(self.browser.view.query) or self.browser.opened_for

    def clear_filter(self) -> None:
        self.browser.clear_filter()

    def open_for(self, query: str) -> None:
        """Show records another view asks for (esc brings back the view as it was)."""
        self.browser.open_for(query)

    def leave(self) -> bool:
        """esc: drop a pair's mark, leave the filter box, drop the marks, then clear the
        filter, one at a time."""
        return self.drop_pair_mark() or self.leave_box() or self.drop_marks() or super().leave()

    def drop_pair_mark(self) -> bool:
        """Forget a pending pair's first record (esc); False when there was none."""
        if self.pair_mark is None:
            return False
        what = self.pair_mark[1]
        self.pair_mark = None
        self.notify(f"{what.label} mark cleared")
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
                    from ..core.export import format_for

                    self.export_to(path, ids, what, format_for(path, fmt))

            self.app.push_screen(export_prompt(len(ids), what, self.state.now(), fmt), chosen)

        self.app.push_screen(export_menu(len(ids), what), kind)

    @work(group="export", exit_on_error=False)
    async def export_to(self, path: Path, ids: frozenset[str], what: str, fmt: Format) -> None:
        from ..core.export import BadExport, ExportRequest, atomic_file, export

        backup = fmt == BACKUP
        request = ExportRequest(format=fmt, ids=ids, marked=what == "marked",
                                with_events=backup, with_sources=backup)  # fmt: skip
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

    def curate(
        self, row: Row | None, verb: str, *, many: bool = False, group: Sequence[Row] = ()
    ) -> None:
        """Apply a curation verb to ``row`` (from this list, or asked by another view);
        with ``many`` and records marked, to every marked record; ``group``: the records
        a verb that takes several acts on when nothing is marked (a Review pair). The
        Curator writes; this view keeps the marks and a pending pair's first record."""
        what = named(verb)
        if what.takes == "several":
            if many and self.marks:
                rows = [self.state.find(i) for i in self.marks]
                found = [r for r in rows if r is not None]
                self.curator.merge(found, verb, dict(self.marks))
            else:
                self.curator.merge(group or ([row] if row is not None else []), verb)
            return
        if many and self.marks and self.curator.bulk(verb, self.marks, self.arrived):
            return
        if what.takes == "one":
            self.curator.curate(row, verb)
        elif (memory := self.curator.usable(row)) is not None:
            self._mark_pair(memory, what)

    def curate_asked(self, row: Row | None, verb: str, group: Sequence[Row]) -> None:
        """A curation asked by another view (Search, Recall, Review, the record menu)."""
        self.curate(row, verb, group=group)

    def _mark_pair(self, row: Memory, what: Verb) -> None:
        mark = self.pair_mark
        if mark is None or mark[0].id == row.id or mark[1] != what:
            self.pair_mark = (row, what)
            self.notify(what.second)
            self.post_message(StatusChanged())
            return
        self.pair_mark = None
        self.post_message(StatusChanged())
        self.curator.pair(mark[0], row, what.name)
