"""The memevo-tui application and its main screen."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Footer, Header

from store import Clock, CorruptRow, Memory, MemoryStore, StoreError, system_clock

from .messages import MemoriesLoaded, StoreFailed
from .resources import stylesheet
from .widgets.memory_detail import MemoryDetail
from .widgets.memory_list import MemoryList, Row


def default_order(load_rows: list[Row]) -> list[Row]:
    """Corrupt rows first (so they are seen), then newest evidence first."""
    corrupt = [r for r in load_rows if isinstance(r, CorruptRow)]
    good = [r for r in load_rows if isinstance(r, Memory)]
    good.sort(key=lambda m: m.id)
    good.sort(key=lambda m: m.updated_at, reverse=True)
    return [*corrupt, *good]


class MemevoApp(App[None]):
    """See, curate and correct what pi remembers."""

    CSS_PATH = [stylesheet("app.tcss")]
    TITLE = "memevo"
    ENABLE_COMMAND_PALETTE = True

    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("tab", "focus_next", "Next pane", show=False, id="app.focus_next"),
        Binding("shift+tab", "focus_previous", "Previous pane", show=False, id="app.focus_prev"),
    ]

    def __init__(
        self,
        db_path: Path,
        *,
        read_only: bool = False,
        clock: Clock = system_clock,
        label: str | None = None,
    ) -> None:
        super().__init__()
        self.db_path = db_path
        self.label = label
        self.read_only = read_only
        self.clock = clock
        self.store: MemoryStore | None = None
        self.loaded: MemoriesLoaded | None = None
        self.sub_title = self.short_path

    @property
    def short_path(self) -> str:
        """The store's label, or its file and directory: enough to recognise it."""
        return self.label or f"{self.db_path.parent.name}/{self.db_path.name}"

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            yield MemoryList(id="memory-list")
            yield MemoryDetail(id="memory-detail")
        yield Footer()

    NARROW = 110
    """Below this many columns the detail pane stacks under the list."""

    def on_resize(self, event: events.Resize) -> None:
        self.query_one("#main").set_class(event.size.width < self.NARROW, "-narrow")

    def on_mount(self) -> None:
        self.query_one("#main").set_class(self.size.width < self.NARROW, "-narrow")
        self.query_one(MemoryList).focus()
        self.load_store()

    @work(exclusive=True, group="store", exit_on_error=False)
    async def load_store(self) -> None:
        try:
            if self.store is None:
                self.store = await MemoryStore.open(
                    self.db_path, read_only=self.read_only, clock=self.clock
                )
                if self.store.read_only:
                    self.sub_title = f"{self.short_path} (read-only: {self.store.read_only_reason})"
            load = await self.store.load_memories()
        except StoreError as exc:
            self.post_message(StoreFailed(str(exc)))
            return
        self.post_message(MemoriesLoaded(load))

    def on_memories_loaded(self, message: MemoriesLoaded) -> None:
        self.loaded = message
        rows: list[Row] = [*message.load.corrupt, *message.load.memories]
        self.query_one(MemoryList).set_rows(default_order(rows))
        if message.load.corrupt:
            self.notify(
                f"{len(message.load.corrupt)} corrupt row(s) flagged in the list",
                severity="warning",
            )

    def on_store_failed(self, message: StoreFailed) -> None:
        self.notify(message.message, title="Store error", severity="error", timeout=30)

    def on_memory_list_highlighted(self, message: MemoryList.Highlighted) -> None:
        self.query_one(MemoryDetail).show(message.row)

    async def on_unmount(self) -> None:
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
        shown = len(app.query_one(MemoryList).rows)
        corrupt = len(app.loaded.load.corrupt)
        await pilot.press("q")
    return f"memevo-tui: smoke run ok: {shown} rows shown ({corrupt} corrupt)"


def run_app(
    path: Path, *, read_only: bool, clock: Clock, smoke: bool = False, label: str | None = None
) -> int:
    app = MemevoApp(path, read_only=read_only, clock=clock, label=label)
    if smoke:
        report = asyncio.run(_smoke(app))
        if report is None:
            sys.stderr.write("memevo-tui: smoke run failed: the memories never loaded\n")
            return 1
        print(report)
        return 0
    app.run()
    return 0
