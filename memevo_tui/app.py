"""The memevo-tui application and its main screen.

Every store call runs in a worker and answers with a typed message
(``messages.py``); handlers only update widgets.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import ClassVar

from rich.console import Group
from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Footer, Header, Input, Static, TabbedContent, TabPane

from store import (
    Clock,
    CorruptRow,
    Event,
    Memory,
    MemoryStore,
    Refused,
    Source,
    StoreError,
    system_clock,
)
from store._js import iso
from store.demo_learner import learn_forever
from store.recall import Purpose, Recall, RecallIndex, digest
from store.status import queue_status

from .commands import SORTS, MemevoCommands
from .messages import (
    EventsLoaded,
    LiveChange,
    MemoriesLoaded,
    RecallComputed,
    RecordEvents,
    SourceDetails,
    SourcesLoaded,
    StoreFailed,
    UndoAsked,
    UndoPlan,
    UndoPreview,
    WriteDone,
    WriteFailed,
)
from .resources import stylesheet
from .screens.confirm import ConfirmScreen
from .screens.correct import CorrectScreen
from .screens.help import HelpScreen, help_text
from .text import one_line, visible
from .view import DEFAULT_DESCENDING, View, apply_view
from .widgets.event_diff import EventDiff, describe_undo
from .widgets.event_list import EventList
from .widgets.learning_status import LearningStatus
from .widgets.memory_detail import MemoryDetail
from .widgets.memory_list import MemoryList, Row
from .widgets.recall_list import RecallList
from .widgets.recall_pane import RecallPane
from .widgets.source_detail import SourceDetail
from .widgets.source_list import SourceList
from .widgets.virtual_list import VirtualList

FIRST_PAGE_THRESHOLD = 5_000
FIRST_PAGE = 400
EVENT_PAGE = 200
LIVE_INTERVAL = 0.2
"""Seconds between checks for commits by other connections (pi's, the demo learner's)."""
SOURCE_PAGE = 500

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


def keymap_path() -> Path:
    explicit = os.environ.get("MEMEVO_KEYMAP")
    if explicit:
        return Path(explicit).expanduser()
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "memevo-tui" / "keymap.json"


def load_keymap(path: Path) -> tuple[dict[str, str], str | None]:
    """Binding id -> keys, from a JSON object; an error message when it is unusable."""
    if not path.is_file():
        return {}, None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return {}, f"Ignoring {path}: {exc}"
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        return {}, f"Ignoring {path}: expected an object of binding id to keys"
    return dict(data), None


class MemevoApp(App[None]):
    """See, curate and correct what pi remembers."""

    CSS_PATH = [stylesheet("app.tcss")]
    TITLE = "memevo"
    COMMANDS = App.COMMANDS | {MemevoCommands}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="app.quit", tooltip="Quit memevo-tui"),
        Binding(
            "question_mark",
            "help",
            "Help",
            id="app.help",
            key_display="?",
            tooltip="This help: keys, states, filter syntax",
        ),
        Binding(
            "slash",
            "filter",
            "Filter",
            id="app.filter",
            key_display="/",
            tooltip="Filter the memory list as you type",
        ),
        Binding(
            "a",
            "toggle_hidden",
            "All",
            id="app.toggle_hidden",
            tooltip="Show or hide forgotten and conflicted records",
        ),
        Binding("o", "cycle_sort", "Sort", id="app.sort", tooltip="Sort by the next column"),
        Binding(
            "O",
            "reverse_sort",
            "Reverse",
            id="app.reverse_sort",
            show=False,
            tooltip="Reverse the sort order",
        ),
        Binding(
            "m",
            "show_tab('memories')",
            "Memories",
            id="app.memories",
            show=False,
            tooltip="Show the memory list",
        ),
        Binding(
            "h",
            "show_tab('history')",
            "History",
            id="app.history",
            tooltip="Show the event history",
        ),
        Binding(
            "s",
            "show_tab('search')",
            "Search",
            id="app.search",
            tooltip="Search like /memory search",
        ),
        Binding(
            "i",
            "show_tab('recall')",
            "Recall",
            id="app.recall",
            tooltip="Recall preview: what pi would inject for a prompt, and why",
        ),
        Binding(
            "l",
            "show_tab('learning')",
            "Learning",
            id="app.learning",
            tooltip="Show the learning queue and its model calls",
        ),
        Binding(
            "space",
            "toggle_live",
            "Live",
            id="app.live",
            key_display="space",
            tooltip="Pause or resume live updates",
        ),
        Binding(
            "ctrl+r",
            "reload",
            "Reload",
            id="app.reload",
            show=False,
            tooltip="Reload everything from the store",
        ),
        Binding(
            "escape",
            "escape",
            "Back",
            id="app.escape",
            show=False,
            tooltip="Leave the filter or search box; clear a conflict mark",
        ),
        Binding(
            "tab",
            "focus_next",
            "Next pane",
            show=False,
            id="app.focus_next",
            tooltip="Next pane",
        ),
        Binding(
            "shift+tab",
            "focus_previous",
            "Previous pane",
            show=False,
            id="app.focus_prev",
            tooltip="Previous pane",
        ),
    ]

    NARROW = 110
    """Below this many columns the detail panes stack under their lists."""

    def __init__(
        self,
        db_path: Path,
        *,
        read_only: bool = False,
        clock: Clock = system_clock,
        label: str | None = None,
        keymap: dict[str, str] | None = None,
        new_id: Callable[[], str] | None = None,
        live_demo: bool = False,
    ) -> None:
        super().__init__()
        self.db_path = db_path
        self.new_id = new_id
        self.live_demo = live_demo
        self.live = True
        self._polling = False
        self._last_rowid = 0
        self._last_change: float | None = None
        self._learning_summary = ""
        self._learner_stop = asyncio.Event()
        self.read_only = read_only
        self.clock = clock
        self.label = label
        self.store: MemoryStore | None = None
        self.loaded: MemoriesLoaded | None = None
        self.all_rows: list[Row] = []
        self.view = View()
        self._haystacks: dict[str, str] = {}
        self._filter_timer: Timer | None = None
        self._search_timer: Timer | None = None
        self._full_loads = 0  # how many times all_rows was replaced wholesale
        self._changed_rows: dict[str, Row] = {}  # rows changed in place since the index
        self._recall_state: tuple[RecallIndex, int] | None = None
        self._detail_timers: dict[str, Timer] = {}
        self._history_stale = True
        self.conflict_mark: Memory | None = None
        if keymap is None:
            keymap, self._keymap_error = load_keymap(keymap_path())
        else:
            self._keymap_error = None
        self._user_keymap = keymap
        self.sub_title = self.short_path

    @property
    def short_path(self) -> str:
        """The store's label, or its file and directory: enough to recognise it."""
        return self.label or f"{self.db_path.parent.name}/{self.db_path.name}"

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(id="tabs", initial="memories"):
            with TabPane("Memories", id="memories"):
                yield Input(
                    placeholder="/ filter: words, kind:fact state:dormant origin:… is:pinned",
                    id="filter",
                )
                with Horizontal(id="main", classes="split"):
                    yield MemoryList(id="memory-list")
                    yield MemoryDetail(id="memory-detail")
            with TabPane("History", id="history"):
                with Horizontal(id="history-main", classes="split"):
                    yield EventList(id="event-list")
                    yield EventDiff(id="event-diff")
            with TabPane("Learning", id="learning"):
                yield LearningStatus(id="learning-status")
                with Horizontal(id="learning-main", classes="split"):
                    yield SourceList(id="source-list")
                    yield SourceDetail(id="source-detail")
            with TabPane("Search", id="search"):
                yield Input(placeholder="search memories (dormant included)", id="search-input")
                with Horizontal(id="search-main", classes="split"):
                    yield MemoryList(id="search-results")
                    yield MemoryDetail(id="search-detail")
            with TabPane("Recall", id="recall"):
                yield RecallPane(id="recall-pane")
        yield Static(id="status-line", markup=False)
        yield Footer()

    def _narrow(self, width: int) -> None:
        for split in self.query(".split, LearningStatus"):
            split.set_class(width < self.NARROW, "-narrow")

    def on_resize(self, event: events.Resize) -> None:
        self._narrow(event.size.width)

    def on_mount(self) -> None:
        self._narrow(self.size.width)
        if self._user_keymap:
            self.set_keymap(self._user_keymap)
        if self._keymap_error:
            self.notify(self._keymap_error, severity="warning")
        results = self.query_one("#search-results", MemoryList)
        results.empty_text = "Type a query above."
        results.sort_key = None  # results come in relevance order
        self.query_one("#memory-list", MemoryList).empty_text = "Loading…"
        self.query_one("#memory-list", MemoryList).focus()
        self.update_status()
        self.load_store()

    # ------------------------------------------------------------------ loading

    async def _open(self) -> MemoryStore:
        if self.store is None:
            self.store = await MemoryStore.open(
                self.db_path, read_only=self.read_only, clock=self.clock, new_id=self.new_id
            )
            if self.store.read_only:
                self.sub_title = f"{self.short_path} (read-only: {self.store.read_only_reason})"
        return self.store

    @work(exclusive=True, group="load", exit_on_error=False)
    async def load_store(self) -> None:
        try:
            store = await self._open()
            total = await store.memory_count()
            if total > FIRST_PAGE_THRESHOLD:
                first = await store.recent_memories(FIRST_PAGE)
                painted = asyncio.Event()
                self.post_message(MemoriesLoaded(first, partial=True, total=total))
                # Parse the rest only once the first screenful is on screen.
                self.call_after_refresh(lambda: self.call_after_refresh(painted.set))
                await painted.wait()
            last_rowid = await store.last_event_rowid()
            await store.changed()  # the change signal's baseline is this read
            load = await store.load_memories(yield_every=2_000)
        except StoreError as exc:
            self.post_message(StoreFailed(str(exc)))
            return
        total = len(load.memories) + len(load.corrupt)
        self.post_message(MemoriesLoaded(load, total=total, last_rowid=last_rowid))

    @property
    def ready(self) -> bool:
        """False while shutting down: results that arrive then are dropped."""
        return self.is_running and bool(self.query("#memory-list"))

    def on_memories_loaded(self, message: MemoriesLoaded) -> None:
        if not self.ready:
            return
        self.all_rows = [*message.load.corrupt, *message.load.memories]
        self._full_loads += 1
        self._changed_rows.clear()
        self._haystacks.clear()
        memory_list = self.query_one("#memory-list", MemoryList)
        memory_list.empty_text = "No memory matches the filter."
        if not message.partial:
            self.loaded = message
            self._last_rowid = max(self._last_rowid, message.last_rowid)
            if not self._polling:
                self._polling = True
                self.set_interval(LIVE_INTERVAL, self._poll)
                if self.live_demo:
                    self.run_learner()
            # The loaded records live as long as the view: keep the cycle collector
            # from rescanning them on every full collection (a pause per keypress
            # at 100,000 rows otherwise). They are still freed when replaced.
            gc.freeze()
            if message.load.corrupt:
                self.notify(
                    f"{len(message.load.corrupt)} corrupt row(s) flagged at the top of the list",
                    severity="warning",
                )
        self.apply_view(total=message.total, partial=message.partial)

    def on_store_failed(self, message: StoreFailed) -> None:
        if not self.ready:
            return
        self.query_one("#memory-list", MemoryList).empty_text = message.message
        self.query_one("#memory-list", MemoryList).refresh()
        self.notify(message.message, title="Store error", severity="error", timeout=30)

    # ------------------------------------------------------------------ the view

    def apply_view(self, *, total: int | None = None, partial: bool = False) -> None:
        rows, parsed = apply_view(self.all_rows, self.view, self._haystacks)
        memory_list = self.query_one("#memory-list", MemoryList)
        memory_list.sort_key = self.view.sort
        memory_list.sort_descending = self.view.descending
        memory_list.set_rows(rows)
        if parsed.errors:
            self.notify("; ".join(parsed.errors), title="Filter", severity="warning")
        self.update_status(total=total, partial=partial)

    def update_status(self, *, total: int | None = None, partial: bool = False) -> None:
        shown = len(self.query_one("#memory-list", MemoryList).rows)
        count = total if total is not None else len(self.all_rows)
        arrow = "▼" if self.view.descending else "▲"
        parts = [
            f"{shown:,} shown of {count:,}" + (" (loading the rest…)" if partial else ""),
            f"sort {self.view.sort} {arrow}",
            "forgotten/conflicted shown"
            if self.view.show_hidden
            else "forgotten/conflicted hidden (a)",
        ]
        if self.view.query:
            parts.append(f"filter: {self.view.query}")
        if self.conflict_mark is not None:
            parts.append(f"conflict mark: {self.conflict_mark.id}")
        if self.store is not None and self.store.read_only:
            parts.append(f"READ-ONLY: {self.store.read_only_reason}")
        if self._learning_summary:
            parts.append(self._learning_summary)
        if self.live:
            last = iso(self._last_change)[11:19] if self._last_change else "none yet"
            parts.append(f"● live (last change {last})")
        else:
            parts.append("‖ paused (space)")
        parts.append("? help")
        self.query_one("#status-line", Static).update(" · ".join(parts))

    def _set_view(
        self,
        *,
        query: str | None = None,
        show_hidden: bool | None = None,
        sort: str | None = None,
        descending: bool | None = None,
    ) -> None:
        v = self.view
        self.view = View(
            query=v.query if query is None else query,
            show_hidden=v.show_hidden if show_hidden is None else show_hidden,
            sort=v.sort if sort is None else sort,
            descending=v.descending if descending is None else descending,
        )
        self.apply_view()

    def action_toggle_hidden(self) -> None:
        self._set_view(show_hidden=not self.view.show_hidden)
        self.notify(
            "Showing forgotten and conflicted records"
            if self.view.show_hidden
            else "Hiding forgotten and conflicted records"
        )

    def action_cycle_sort(self) -> None:
        index = SORTS.index(self.view.sort) if self.view.sort in SORTS else -1
        key = SORTS[(index + 1) % len(SORTS)]
        self.action_sort_by(key)

    def action_sort_by(self, key: str) -> None:
        self._set_view(sort=key, descending=key in DEFAULT_DESCENDING)

    def action_reverse_sort(self) -> None:
        self._set_view(descending=not self.view.descending)

    def on_virtual_list_header_clicked(self, message: VirtualList.HeaderClicked) -> None:
        if message.source.id != "memory-list" or message.column not in SORTS:
            return
        if message.column == self.view.sort:
            self.action_reverse_sort()
        else:
            self.action_sort_by(message.column)

    def action_filter(self) -> None:
        self.action_show_tab("memories")
        self.focus_now(self.query_one("#filter", Input))

    def action_clear_filter(self) -> None:
        self.query_one("#filter", Input).value = ""
        self._set_view(query="")

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            if self._filter_timer is not None:
                self._filter_timer.stop()
            value = event.value
            self._filter_timer = self.set_timer(0.12, lambda: self._set_view(query=value))
        elif event.input.id == "search-input":
            if self._search_timer is not None:
                self._search_timer.stop()
            query = event.value
            self._search_timer = self.set_timer(0.15, lambda: self.run_search(query))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            self._set_view(query=event.value)
            self.focus_now(self.query_one("#memory-list", MemoryList))
        elif event.input.id == "search-input":
            self.run_search(event.value)
            self.focus_now(self.query_one("#search-results", MemoryList))

    def action_escape(self) -> None:
        if self.conflict_mark is not None:
            self.conflict_mark = None
            self.notify("Conflict mark cleared")
            self.update_status()
            return
        focused = self.focused
        if isinstance(focused, Input) and focused.id == "filter":
            self.focus_now(self.query_one("#memory-list", MemoryList))
        elif isinstance(focused, Input) and focused.id == "search-input":
            self.focus_now(self.query_one("#search-results", MemoryList))

    def focus_now(self, widget: Widget) -> None:
        """Move focus before the next queued key is handled.

        ``Widget.focus()`` defers the change, so keys typed (or pasted) right
        after ``/`` would still reach the list and run its single-key actions.
        """
        self.screen.set_focus(widget)

    def action_show_tab(self, tab: str) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        search = self.query_one("#search-input", Input).value
        if tab == "recall" and tabs.active == "search" and search.strip():
            # From a search, the preview explains that search.
            self.query_one(RecallPane).explain_search(search)
        tabs.active = tab
        target = {
            "memories": "#memory-list",
            "history": "#event-list",
            "search": "#search-input",
            "learning": "#source-list",
            "recall": "#recall-input",
        }[tab]
        self.focus_now(self.query_one(target))

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "history" and self._history_stale:
            self.load_events()
        elif event.pane.id == "learning":
            self.load_sources()

    def action_reload(self) -> None:
        self._history_stale = True
        self.load_store()
        if self.query_one("#tabs", TabbedContent).active == "history":
            self.load_events()
        self.notify("Reloaded from the store")

    def action_help(self) -> None:
        groups = [
            ("anywhere", MemevoApp.BINDINGS),
            ("lists", VirtualList.BINDINGS),
            ("memory list", MemoryList.BINDINGS),
            ("history", EventList.BINDINGS),
            ("learning", SourceList.BINDINGS),
            ("recall preview", [*RecallPane.BINDINGS, *RecallList.BINDINGS]),
            ("dialogs", ConfirmScreen.BINDINGS),
            ("editor", CorrectScreen.BINDINGS),
        ]
        self.push_screen(HelpScreen(help_text(groups, self._user_keymap)))

    # ------------------------------------------------------------------ details

    DETAIL_DELAY = 0.03
    """Seconds the cursor must rest before the detail pane follows it."""

    def on_memory_list_highlighted(self, message: MemoryList.Highlighted) -> None:
        if not self.ready:
            return
        # The list redraws at once; the detail pane follows when the cursor
        # rests, so holding j costs one list line per row and nothing more.
        detail_id = "#memory-detail" if message.source.id == "memory-list" else "#search-detail"
        timer = self._detail_timers.pop(detail_id, None)
        if timer is not None:
            timer.stop()
        row = message.row
        self._detail_timers[detail_id] = self.set_timer(
            self.DETAIL_DELAY, lambda: self._show_detail(detail_id, row)
        )

    def _show_detail(self, detail_id: str, row: Row | None) -> None:
        self._detail_timers.pop(detail_id, None)
        if not self.ready:
            return
        self.query_one(detail_id, MemoryDetail).show(row)
        if isinstance(row, Memory):
            self.load_record_events(row.id, detail_id)

    @work(exclusive=True, group="record-events", exit_on_error=False)
    async def load_record_events(self, memory_id: str, detail_id: str) -> None:
        store = self.store
        if store is None:
            return
        try:
            found = await store.events(memory_id=memory_id, limit=50)
        except StoreError:
            return
        self.post_message(RecordEvents(memory_id, found, detail_id))

    def on_record_events(self, message: RecordEvents) -> None:
        if not self.ready:
            return
        detail_id = message.detail_id
        memory_list = self.query_one(
            "#memory-list" if detail_id == "#memory-detail" else "#search-results", MemoryList
        )
        current = memory_list.highlighted
        if current is not None and current.id == message.memory_id:
            self.query_one(detail_id, MemoryDetail).show_events(message.events)

    # ------------------------------------------------------------------ history

    @work(exclusive=True, group="events", exit_on_error=False)
    async def load_events(self, before_rowid: int | None = None) -> None:
        try:
            store = await self._open()
            rows = await store.events(limit=EVENT_PAGE, before_rowid=before_rowid)
        except StoreError as exc:
            self.post_message(StoreFailed(str(exc)))
            return
        self.post_message(
            EventsLoaded(rows, append=before_rowid is not None, exhausted=len(rows) < EVENT_PAGE)
        )

    def on_events_loaded(self, message: EventsLoaded) -> None:
        if not self.ready:
            return
        event_list = self.query_one(EventList)
        rows = [*event_list.rows, *message.rows] if message.append else list(message.rows)
        event_list.exhausted = message.exhausted
        event_list.set_rows(rows)
        if not message.append:
            self._history_stale = False

    def on_event_list_more_wanted(self, message: EventList.MoreWanted) -> None:
        self.load_events(message.before_rowid)

    def on_event_list_highlighted(self, message: EventList.Highlighted) -> None:
        if not self.ready:
            return
        diff = self.query_one(EventDiff)
        diff.show(message.row)
        if isinstance(message.row, Event) and message.row.after:
            self.preview_undo(message.row.id)

    async def _undo_plan(self, event_id: str) -> UndoPlan | str | None:
        """What undoing would write, upstream's refusal as text, or None if unreadable."""
        if self.store is None:
            return None
        try:
            return await self.store.undo_preview(event_id)
        except Refused as exc:
            return str(exc)
        except StoreError as exc:
            self.post_message(WriteFailed("undo", str(exc)))
            return None

    @work(exclusive=True, group="undo-preview", exit_on_error=False)
    async def preview_undo(self, event_id: str) -> None:
        await asyncio.sleep(0.05)  # let fast cursor movement settle first
        plan = await self._undo_plan(event_id)
        if plan is not None:
            self.post_message(UndoPreview(event_id, plan))

    def on_undo_preview(self, message: UndoPreview) -> None:
        if not self.ready:
            return
        current = self.query_one(EventList).highlighted
        if current is not None and current.id == message.event_id:
            self.query_one(EventDiff).show_undo(message.plan)

    def on_event_list_undo_requested(self, message: EventList.UndoRequested) -> None:
        row = message.row
        if row is None or isinstance(row, CorruptRow):
            self.notify("Select a valid event to undo", severity="warning")
            return
        if self._refuse_if_read_only():
            return
        self.confirm_undo(row.id, f"event {row.id} ({one_line(row.reason, 60)})")

    # ------------------------------------------------------------------ search

    async def _index(self) -> RecallIndex | None:
        """The recall index of the loaded records, kept current off the UI thread.

        Rows changed in place since the last build are applied to it (cheap);
        after a wholesale reload, or when a row turned corrupt, it is rebuilt.
        """
        if self.loaded is None:
            return None
        pending = dict(self._changed_rows)
        state = self._recall_state
        full_loads = self._full_loads
        if state is not None and state[1] == full_loads and not pending:
            return state[0]
        if (
            state is None
            or state[1] != full_loads
            or any(isinstance(r, CorruptRow) for r in pending.values())
        ):
            memories = [r for r in self.all_rows if isinstance(r, Memory)]
            index = await asyncio.to_thread(RecallIndex, memories)
        else:
            rows = [r for r in pending.values() if isinstance(r, Memory)]
            index = await asyncio.to_thread(state[0].updated, rows)
        for memory_id, row in pending.items():
            if self._changed_rows.get(memory_id) is row:
                del self._changed_rows[memory_id]
        self._recall_state = (index, full_loads)
        gc.freeze()  # long-lived, like the records: keep full collections short
        return index

    async def _recall(self, prompt: str, purpose: Purpose, turns: Sequence[str] = ()) -> Recall:
        index = await self._index()
        if index is None:  # still loading: ask the store directly
            store = await self._open()
            return await store.recall(prompt, purpose=purpose, recent_user_turns=turns)
        return await asyncio.to_thread(
            index.recall, prompt, purpose=purpose, recent_user_turns=turns
        )

    @work(exclusive=True, group="search", exit_on_error=False)
    async def run_search(self, query: str, rerun: bool = False) -> None:
        try:
            result = await self._recall(query, "search")
        except StoreError as exc:
            self.post_message(StoreFailed(str(exc)))
            return
        self.post_message(RecallComputed(result, "search", rerun=rerun))

    @work(exclusive=True, group="recall", exit_on_error=False)
    async def run_recall(
        self, prompt: str, purpose: Purpose, turns: Sequence[str] = (), rerun: bool = False
    ) -> None:
        try:
            result = await self._recall(prompt, purpose, turns)
            lines = await asyncio.to_thread(digest, result) if purpose == "inject" else ()
        except StoreError as exc:
            self.post_message(StoreFailed(str(exc)))
            return
        self.post_message(RecallComputed(result, "recall", rerun=rerun, digest=lines))

    def on_recall_computed(self, message: RecallComputed) -> None:
        if not self.ready:
            return
        result = message.result
        if message.target == "search":
            results = self.query_one("#search-results", MemoryList)
            results.empty_text = (
                f"Nothing matches {one_line(result.prompt, 60)!r} (see i for why)."
                if result.prompt.strip()
                else "Type a query above."
            )
            results.set_rows(result.memories)
            return
        changes = self.query_one(RecallPane).show(result, message.digest)
        if message.rerun and changes:
            self.notify("\n".join(changes[:4]), title="Recall preview changed", timeout=8)

    def on_recall_pane_prompt_changed(self, message: RecallPane.PromptChanged) -> None:
        self.run_recall(message.prompt, message.purpose, message.turns)

    def rerun_queries(self) -> None:
        """Re-run the search and the recall preview after the records changed."""
        search = self.query_one("#search-input", Input).value
        if search.strip():
            self.run_search(search, rerun=True)
        pane = self.query_one(RecallPane)
        if pane.prompt.strip():
            turns = tuple(pane.turns) if pane.purpose == "inject" else ()
            self.run_recall(pane.prompt, pane.purpose, turns, rerun=True)

    def on_recall_list_goto_requested(self, message: RecallList.GotoRequested) -> None:
        """Show the record in the memory list, clearing what hides it."""
        memory_id = message.memory_id
        row = next((r for r in self.all_rows if r.id == memory_id), None)
        if row is None:
            self.notify(f"{memory_id} is no longer in the store", severity="warning")
            return
        memory_list = self.query_one("#memory-list", MemoryList)
        if not any(r.id == memory_id for r in memory_list.rows):
            hidden = isinstance(row, Memory) and not row.active
            self.query_one("#filter", Input).value = ""
            self._set_view(query="", show_hidden=self.view.show_hidden or hidden)
        self.action_show_tab("memories")
        index = next((i for i, r in enumerate(memory_list.rows) if r.id == memory_id), None)
        if index is None:  # not expected: the view was just opened up to show it
            self.notify(f"{memory_id} is not in the memory list", severity="warning")
            return
        memory_list.cursor = index
        self.notify(
            "p pins, e corrects, r resolves, 3 marks accurate; i returns to the preview, "
            "which re-runs after every change",
            title=f"Showing {memory_id}",
        )

    # ------------------------------------------------------------------ live

    def action_toggle_live(self) -> None:
        self.live = not self.live
        self.notify("Live updates resumed" if self.live else "Live updates paused")
        self.update_status()
        if self.live:
            self._poll()

    def _poll(self) -> None:
        if self.live and self.store is not None and self.loaded is not None:
            self.check_changes()

    @work(exclusive=True, group="live", exit_on_error=False)
    async def check_changes(self) -> None:
        """Cheap when nothing changed: one PRAGMA data_version, nothing reloaded."""
        store = self.store
        if store is None:
            return
        try:
            if not await store.changed():
                return
            events = await store.events(limit=None, after_rowid=self._last_rowid)
            ids = list(
                dict.fromkeys(i for e in events if isinstance(e, Event) for i in e.record_ids)
            )
            # Small stores are re-read whole: that also catches reinforcement
            # stamps, which learning runs write without an event.
            full = None
            if len(self.all_rows) <= FIRST_PAGE_THRESHOLD:
                full = await store.load_memories()
                wanted = set(ids)
                rows: list[Memory | CorruptRow] = [r for r in full.memories if r.id in wanted]
                rows += [r for r in full.corrupt if r.id in wanted]
            else:
                rows = await store.memories(ids)
        except StoreError:
            return
        self.post_message(LiveChange(events, rows, self.clock(), full))

    def on_live_change(self, message: LiveChange) -> None:
        if not self.ready:
            return
        self._last_change = message.at
        rowids = [e.rowid for e in message.events if isinstance(e, Event)]
        if rowids:
            self._last_rowid = max(self._last_rowid, *rowids)
        memory_list = self.query_one("#memory-list", MemoryList)
        changed = {r.id for r in message.rows}
        if message.full is not None:
            self.all_rows = [*message.full.corrupt, *message.full.memories]
            self._full_loads += 1
            self._changed_rows.clear()
            self._haystacks.clear()
            self.apply_view()
        else:
            self._apply_rows(message.rows)
        memory_list.flash(changed)
        if message.events and not self._history_stale:
            event_list = self.query_one(EventList)
            known = {e.id for e in event_list.rows}
            fresh = [e for e in message.events if e.id not in known]
            event_list.set_rows([*fresh, *event_list.rows])
            event_list.flash({e.id for e in fresh})
        if self.query_one("#tabs", TabbedContent).active == "learning" or self._learning_summary:
            self.load_sources()
        if message.rows or message.full is not None:
            self.rerun_queries()
        self.update_status()

    @work(group="learner", exit_on_error=False)
    async def run_learner(self) -> None:
        """The demo learner: pi-shaped learning runs on its own connection."""
        self.notify("Demo learner running: watch the Learning tab (l) and the list")
        await learn_forever(self.db_path, clock=self.clock, stop=self._learner_stop)

    # ------------------------------------------------------------------ learning

    @work(exclusive=True, group="sources", exit_on_error=False)
    async def load_sources(self) -> None:
        try:
            store = await self._open()
            sources = await store.sources(limit=SOURCE_PAGE)
            queue = await queue_status(store)
        except StoreError as exc:
            self.post_message(StoreFailed(str(exc)))
            return
        self.post_message(SourcesLoaded(sources, queue))

    def on_sources_loaded(self, message: SourcesLoaded) -> None:
        if not self.ready:
            return
        source_list = self.query_one(SourceList)
        source_list.now_ms = self.clock()
        before = {r.id: r for r in source_list.rows}
        source_list.set_rows(list(message.sources))
        if before:
            changed = {
                r.id
                for r in message.sources
                if r.id not in before
                or getattr(before[r.id], "state", None) != getattr(r, "state", None)
            }
            source_list.flash(changed)
        q = message.queue
        by_state = q.sources_by_state
        self._learning_summary = (
            f"learning: pending {by_state.get('pending', 0)} · running "
            f"{by_state.get('running', 0)} · failed {by_state.get('failed', 0)} "
            f"(paused {q.paused}) · calls/h {q.calls_last_hour} · ${q.usd_last_24h:.2f}/24h"
        )
        self.query_one(LearningStatus).show(q)
        self.update_status()

    def on_source_list_highlighted(self, message: SourceList.Highlighted) -> None:
        if not self.ready:
            return
        row = message.row
        self.query_one(SourceDetail).show(row)
        if isinstance(row, Source):
            self.load_source_details(row.id)

    def on_source_list_open_requested(self, message: SourceList.OpenRequested) -> None:
        query = f"src:{message.source_id}"
        self.query_one("#filter", Input).value = query
        self._set_view(query=query, show_hidden=True)
        self.action_show_tab("memories")
        self.focus_now(self.query_one("#memory-list", MemoryList))

    @work(exclusive=True, group="source-details", exit_on_error=False)
    async def load_source_details(self, source_id: str) -> None:
        store = self.store
        if store is None:
            return
        try:
            calls = await store.model_calls(source_id)
            events = await store.source_events(source_id)
        except StoreError:
            return
        self.post_message(SourceDetails(source_id, calls, events))

    def on_source_details(self, message: SourceDetails) -> None:
        if not self.ready:
            return
        current = self.query_one(SourceList).highlighted
        if current is not None and current.id == message.source_id:
            self.query_one(SourceDetail).show(current, message.calls, message.events)

    # ------------------------------------------------------------------ curation

    def _active_memory_list(self) -> MemoryList:
        if self.query_one("#tabs", TabbedContent).active == "search":
            return self.query_one("#search-results", MemoryList)
        return self.query_one("#memory-list", MemoryList)

    def action_curate(self, verb: str) -> None:
        memory_list = self._active_memory_list()
        self.curate(memory_list.highlighted, verb)

    def on_memory_list_curation_requested(self, message: MemoryList.CurationRequested) -> None:
        self.curate(message.row, message.verb)

    def _refuse_if_read_only(self) -> bool:
        store = self.store
        if store is not None and store.read_only:
            self.notify(
                f"Read-only ({store.read_only_reason}): nothing was written",
                title="Read-only",
                severity="warning",
            )
            return True
        return False

    def curate(self, row: Row | None, verb: str) -> None:
        if row is None:
            self.notify("No memory selected", severity="warning")
            return
        if isinstance(row, CorruptRow):
            self.notify(
                f"{one_line(row.id)} is a corrupt row: it is shown, never acted upon",
                severity="error",
            )
            return
        if self.store is None:
            self.notify("The store is still opening", severity="warning")
            return
        if self._refuse_if_read_only():
            return
        memory_id, revision = row.id, row.revision
        if verb == "pin":
            op = "unpin" if row.pinned else "pin"
            self.write(op, row.id, lambda s: getattr(s, op)(memory_id, expected_revision=revision))
        elif verb in FEEDBACK:
            self.write(
                verb, row.id, lambda s: s.feedback(memory_id, verb, expected_revision=revision)
            )
        elif verb == "resolve":
            self.write(verb, row.id, lambda s: s.resolve(memory_id, expected_revision=revision))
        elif verb == "forget":
            self._confirm_forget(row)
        elif verb == "correct":
            self._edit_correction(row)
        elif verb == "conflict":
            self._mark_conflict(row)
        elif verb == "undo":
            self.undo_last(row.id)

    def _confirm_forget(self, row: Memory) -> None:
        detail = Text()
        detail.append(visible(row.content, keep_newlines=True))
        detail.append(
            "\n\nThe record becomes a tombstone (kept in history, undoable); its text is "
            "blocked from being learned again in this origin.",
            style="italic",
        )

        def done(yes: bool | None) -> None:
            if yes:
                self.write(
                    "forget",
                    row.id,
                    lambda s: s.forget(row.id, expected_revision=row.revision),
                )

        self.push_screen(ConfirmScreen("Forget this memory?", detail, yes="Forget"), done)

    def _edit_correction(self, row: Memory) -> None:
        def done(text: str | None) -> None:
            if text is None:
                return
            if text.strip() == row.content.strip():
                self.notify("Text unchanged: nothing written")
                return
            self.write(
                "correct",
                row.id,
                lambda s: s.correct(row.id, text, expected_revision=row.revision),
            )

        self.push_screen(CorrectScreen(row.id, row.content), done)

    def _mark_conflict(self, row: Memory) -> None:
        mark = self.conflict_mark
        if mark is None or mark.id == row.id:
            self.conflict_mark = row
            self.notify(
                "Marked for conflict: select the contradicting record (same origin) and "
                "press c again; esc cancels"
            )
            self.update_status()
            return
        self.conflict_mark = None
        self.update_status()
        detail = Text()
        detail.append(visible(mark.content, keep_newlines=True))
        detail.append("\n  ≠\n", style="bold")
        detail.append(visible(row.content, keep_newlines=True))

        def done(yes: bool | None) -> None:
            if yes:
                self.write(
                    "conflict",
                    row.id,
                    lambda s: s.conflict(mark.id, row.id, expected_revision=mark.revision),
                )

        self.push_screen(
            ConfirmScreen("Quarantine both as conflicting?", detail, yes="Conflict"), done
        )

    @work(group="undo-lookup", exit_on_error=False)
    async def undo_last(self, memory_id: str) -> None:
        store = self.store
        if store is None:
            return
        found = await store.events(memory_id=memory_id, limit=1)
        if not found or isinstance(found[0], CorruptRow):
            self.notify("This record has no event to undo", severity="warning")
            return
        event = found[0]
        self.confirm_undo(event.id, f"its last event ({one_line(event.reason, 60)})")

    @work(group="undo-lookup", exit_on_error=False)
    async def confirm_undo(self, event_id: str, what: str) -> None:
        """Preview the undo; the answer comes back as an ``UndoAsked`` message."""
        plan = await self._undo_plan(event_id)
        if plan is not None:
            self.post_message(UndoAsked(event_id, what, plan))

    def on_undo_asked(self, message: UndoAsked) -> None:
        if not self.ready:
            return
        if isinstance(message.plan, str):
            self.notify(f"Undo refused: {message.plan}", title="Undo", severity="error")
            return
        event_id = message.event_id
        detail = Group(Text(f"Undo {message.what}?"), describe_undo(message.plan))

        def done(yes: bool | None) -> None:
            if yes:
                self.write("undo", event_id, lambda s: s.undo(event_id))

        self.push_screen(ConfirmScreen("Undo", detail, yes="Undo"), done)

    @work(group="write", exit_on_error=False)
    async def write(
        self, verb: str, target: str, op: Callable[[MemoryStore], Awaitable[str | None]]
    ) -> None:
        store = self.store
        if store is None:
            return
        try:
            event_id = await op(store)
            rows: list[Memory | CorruptRow] = []
            if event_id is not None:
                event = await store.event(event_id)
                rows = await store.memories(event.record_ids)
        except StoreError as exc:  # refused, read-only, busy: nothing was written
            self.post_message(WriteFailed(verb, str(exc)))
            return
        self.post_message(WriteDone(verb, event_id, rows))

    def on_write_failed(self, message: WriteFailed) -> None:
        if not self.ready:
            return
        title = "Changed under you" if "changed since" in message.message else "Refused"
        self.notify(f"{message.label}: {message.message}", title=title, severity="error", timeout=8)
        if title == "Changed under you":
            self.load_store()

    def on_write_done(self, message: WriteDone) -> None:
        if not self.ready:
            return
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
        self._apply_rows(message.rows)
        self._history_stale = True
        if self.query_one("#tabs", TabbedContent).active == "history":
            self.load_events()
        self.rerun_queries()

    def _apply_rows(self, rows: Sequence[Memory | CorruptRow]) -> None:
        """Put changed records in place: the list keeps its order and its cursor."""
        changed = {r.id: r for r in rows}
        self.all_rows = [changed.pop(r.id, r) for r in self.all_rows] + list(changed.values())
        self._changed_rows.update((r.id, r) for r in rows)
        for memory_id in (r.id for r in rows):
            self._haystacks.pop(memory_id, None)
        memory_list = self.query_one("#memory-list", MemoryList)
        visible_now, _ = apply_view(rows, self.view, self._haystacks)
        still = {r.id for r in visible_now}
        needs_view = False
        for r in rows:
            if r.id in still:
                if not memory_list.replace_row(r.id, r):
                    needs_view = True
            elif any(x.id == r.id for x in memory_list.rows):
                needs_view = True
        if needs_view:
            self.apply_view()
        else:
            self.update_status()
        for r in rows:
            self.query_one("#search-results", MemoryList).replace_row(r.id, r)

    async def on_unmount(self) -> None:
        self._learner_stop.set()
        if self.store is not None:
            await self.store.close()
            self.store = None


async def _smoke(app: MemevoApp) -> str | None:
    """Run headless until the memories are on screen; a report line, or None on failure."""
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):
            if app.loaded is not None:
                break
            await pilot.pause(0.05)
        if app.loaded is None:
            return None
        shown = len(app.query_one("#memory-list", MemoryList).rows)
        corrupt = len(app.loaded.load.corrupt)
        await pilot.press("q")
    return f"memevo-tui: smoke run ok: {shown} rows shown ({corrupt} corrupt)"


def run_app(
    path: Path,
    *,
    read_only: bool,
    clock: Clock,
    smoke: bool = False,
    label: str | None = None,
    live_demo: bool = False,
) -> int:
    app = MemevoApp(path, read_only=read_only, clock=clock, label=label, live_demo=live_demo)
    if smoke:
        report = asyncio.run(_smoke(app))
        if report is None:
            sys.stderr.write("memevo-tui: smoke run failed: the memories never loaded\n")
            return 1
        print(report)
        return 0
    app.run()
    return 0


__all__ = ["MemevoApp", "run_app"]
