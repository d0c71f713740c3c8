"""Helpers for driving the app in tests: build it, and wait for conditions, never for time."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from rich.console import Console, Group, RenderableType
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input

from memevo_tui.app import MemevoApp
from memevo_tui.core.view import View
from memevo_tui.dialogs.confirm import ConfirmScreen
from memevo_tui.term.compat.testing import layout_pending, pending_messages
from memevo_tui.views.base import BaseView
from memevo_tui.widgets.memory_browser import MemoryBrowser
from memevo_tui.widgets.memory_list import MemoryList
from store import fixed_clock

from conftest import FIXTURE_NOW, FIXTURES

TIMEOUT = 60.0
"""Seconds a condition may take before a test fails loudly (never a speed check)."""


def snapshot_copy(name: str, tmp_path: Path) -> Path:
    """A fixture copy in a directory whose name is the same on every run."""
    target_dir = tmp_path / "fixtures"
    target_dir.mkdir(exist_ok=True)
    target = target_dir / name
    shutil.copyfile(FIXTURES / name, target)
    target.chmod(0o600)
    return target


def snapshot_sessions() -> str:
    """The fixture's session folder under a path that is the same on every machine (a
    link in the temporary directory, made atomically), for views that name it."""
    import os
    import tempfile

    link = Path(tempfile.gettempdir()) / "memevo-tui-snapshot-sessions"
    made = link.with_name(f"{link.name}.{uuid.uuid4().hex}")
    made.symlink_to((FIXTURES / "sessions").resolve(), target_is_directory=True)
    os.replace(made, link)
    return str(link)


def counter_ids() -> Callable[[], str]:
    """Deterministic UUID-shaped ids, so snapshots of new events are stable."""
    state = {"n": 0}

    def new_id() -> str:
        state["n"] += 1
        return str(uuid.UUID(int=(0x7E57 << 96) | state["n"], version=4))

    return new_id


class SteadyApp(MemevoApp):
    """The app as tests run it: a toast stays until the screenshot, however slow the run."""

    def notify(self, message: str, **kwargs: Any) -> None:
        kwargs["timeout"] = 3600
        super().notify(message, **kwargs)


def make_app(
    path: Path,
    *,
    read_only: bool = False,
    now: str = FIXTURE_NOW,
    sessions: Path | str | None = None,
    **kwargs: Any,
) -> MemevoApp:
    """The dashboard on ``path`` at the fixture's moment (``now``), ids counted, no key
    map of the user's; ``sessions``: where pi's session files are (default: where pi
    keeps them)."""
    kwargs.setdefault("keymap", {})
    kwargs.setdefault("clock", fixed_clock(now))
    app = SteadyApp(path, read_only=read_only, new_id=counter_ids(), **kwargs)
    if sessions is not None:
        app.state.use_sessions(str(sessions))
    return app


class HeldClock:
    """A clock that reads ``start_ms`` until ``release()``, then moves on with real
    time: a test sees what depends on it before the moment passes, however slow."""

    def __init__(self, start_ms: float) -> None:
        self.start_ms = start_ms
        self.released: float | None = None

    def release(self) -> None:
        self.released = time.monotonic()

    def __call__(self) -> float:
        if self.released is None:
            return self.start_ms
        return self.start_ms + (time.monotonic() - self.released) * 1000


def drawn_text(renderable: RenderableType, width: int = 160) -> str:
    """A renderable's text as drawn ``width`` columns wide."""
    console = Console(width=width, record=True)
    console.print(renderable)
    return console.export_text()


def words(text: str) -> str:
    """``text`` with its lines joined and its spaces collapsed (drawn paths wrap anywhere)."""
    return " ".join(text.split())


def dialog_text(screen: Screen[Any], width: int = 160) -> str:
    """What a confirmation says in full, its summary and its scrolling detail, as drawn
    at ``width`` (the detail may be longer than the screen)."""
    assert isinstance(screen, ConfirmScreen), f"not a confirmation: {screen!r}"
    return drawn_text(Group(screen.title_text, screen.summary, screen.detail), width)


@asynccontextmanager
async def opened(
    path: Path, size: tuple[int, int] = (160, 50), **kwargs: Any
) -> AsyncIterator[tuple[MemevoApp, Pilot[None]]]:
    """The dashboard on ``path`` (a copy of a fixture), ``size`` columns and rows, its
    memories loaded: ``async with opened(realistic) as (app, pilot):``."""
    app = make_app(path, **kwargs)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        yield app, pilot


async def until(
    pilot: Pilot[None], condition: Callable[[], object], what: str, timeout: float = TIMEOUT
) -> None:
    """Wait until ``condition()`` holds; fail loudly, naming ``what``, after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout:.0f} s waiting for {what}")
        await pilot.pause(0.01)


def busy(app: MemevoApp) -> bool:
    """True while anything is in flight: the first read of the store, a message not yet
    handled, or a view's worker, debounce or pane that has not caught up."""
    return busy_with(app) is not None


def busy_with(app: MemevoApp) -> str | None:
    """What ``busy`` waits for, in a few words (None: nothing)."""
    if not app.state.loaded and app.state.failure is None:
        return "the first read"
    nodes = [app, *app.screen_stack, *app.screen.walk_children()]
    for node in nodes:
        if pending_messages(node):
            return f"messages for {node!r}"
    if app.curator.busy:
        return "a write of the curator's"
    screen = app.screen  # a layout or a paint not done yet (a pane's text re-wrapping
    if layout_pending(screen):
        return f"a layout or paint of {screen!r}"  # beside a scrollbar that just appeared
    # the views of every screen: a dialog's views and the dashboard's beneath it
    for each in app.screen_stack:
        for view in each.query(BaseView):
            if view.busy:
                return f"{view!r}"
    return None


async def press(pilot: Pilot[None], *keys: str) -> None:
    """Press each key in turn, letting the dashboard settle after each one, as a
    person typing at a steady pace would."""
    for key in keys:
        await pilot.press(key)
        await settle(pilot)


async def settle(pilot: Pilot[None]) -> None:
    """Wait until the dashboard has finished reacting to everything done so far."""
    app = pilot.app
    assert isinstance(app, MemevoApp)
    for _ in range(2):  # handling the last message may start new work: check twice
        await pilot.pause()
        try:
            await until(pilot, lambda: not busy(app), "the dashboard to settle")
        except AssertionError as failed:
            raise AssertionError(f"{failed} (still busy with {busy_with(app)})") from None


async def wait_loaded(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, MemevoApp)
    await until(pilot, lambda: app.state.loaded, "the memories to load")
    for box in app.screen.query(Input):
        box.cursor_blink = False  # snapshots never catch a cursor mid-blink
    await settle(pilot)


# ---------------------------------------------------------------- the realistic store

DURABLE = "e665359dabc60f842b48881d"  # an active, unpinned, fresh infra fact
PINNED = "3968293cbac7923e0e4edb5e"
CONFLICTED = "abf6e80a86af25d435cd7324"  # marked incorrect by feedback


def stored(path: Path, memory_id: str) -> dict[str, Any]:
    con = sqlite3.connect(path)
    row = con.execute("SELECT data FROM memories WHERE id=?", (memory_id,)).fetchone()
    con.close()
    return dict(json.loads(row[0]))


def last_event(path: Path) -> dict[str, Any]:
    con = sqlite3.connect(path)
    row = con.execute("SELECT data FROM events ORDER BY rowid DESC LIMIT 1").fetchone()
    con.close()
    return dict(json.loads(row[0]))


def event_count(path: Path) -> int:
    con = sqlite3.connect(path)
    (n,) = con.execute("SELECT count(*) FROM events").fetchone()
    con.close()
    return int(n)


class Notes:
    """Records the app's toasts."""

    def __init__(self, app: MemevoApp) -> None:
        self.items: list[tuple[str, str]] = []
        original = app.notify

        def notify(message: str, **kwargs: Any) -> None:
            self.items.append((message, str(kwargs.get("severity", "information"))))
            original(message, **kwargs)

        app.notify = notify  # type: ignore[method-assign]

    def last(self) -> str:
        return self.items[-1][0] if self.items else ""


async def select(pilot: Pilot[None], memory_id: str) -> None:
    """Put the cursor on one record by filtering for its id, with real key presses."""
    await pilot.press("slash", *memory_id, "enter")
    await settle(pilot)
    memory_list = pilot.app.query_one("#memory-list", MemoryList)
    assert memory_list.highlighted is not None and memory_list.highlighted.id == memory_id


def list_view(app: MemevoApp) -> View:
    """The memory list's settings: its filter, sort and hidden-records setting."""
    return app.query_one(MemoryBrowser).view


def memory_list(app: MemevoApp) -> MemoryList:
    return app.query_one("#memory-list", MemoryList)
