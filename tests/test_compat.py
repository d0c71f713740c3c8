"""Each private API the dashboard uses (``memevo_tui.term.compat``) is still there, with the
shape the dashboard relies on. A Textual or Python upgrade that moves one fails here,
by name, rather than at a user's key."""

from __future__ import annotations

import asyncio
import inspect
import io
import queue
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.drivers import linux_driver
from textual.widgets import Input, TabbedContent, TabPane

from memevo_tui.term.compat import loop_has_ready
from memevo_tui.term.compat.textual import (
    DRIVER_PRIVATE,
    WRITER_PRIVATE,
    LateFocusTabs,
    LinuxDriver,
    WriterThread,
    XTermParser,
    character_to_key,
    check_bindings,
    driver_of,
    keymap_of,
    use_writer_thread,
)
from memevo_tui.term.guarded import GuardedWriter

pytestmark = pytest.mark.unit  # each test checks one private name of Textual or asyncio


def test_the_xterm_parser_takes_text_and_gives_keys() -> None:
    parser = XTermParser(False)
    keys = [getattr(m, "key", None) for m in [*parser.feed("ab"), *parser.tick()]]
    assert keys == ["a", "b"]
    assert "debug" in inspect.signature(XTermParser.__init__).parameters


def test_the_linux_driver_looks_its_output_thread_up_by_name() -> None:
    assert linux_driver.WriterThread is WriterThread or issubclass(  # type: ignore[attr-defined]
        linux_driver.WriterThread,  # type: ignore[attr-defined]
        WriterThread,
    ), "linux_driver.WriterThread is not Textual's output thread"
    source = inspect.getsource(LinuxDriver.start_application_mode)
    assert "WriterThread(" in source, "the driver no longer starts WriterThread by name"
    before = linux_driver.WriterThread  # type: ignore[attr-defined]
    try:
        use_writer_thread(GuardedWriter)
        assert linux_driver.WriterThread is GuardedWriter  # type: ignore[attr-defined]
    finally:
        linux_driver.WriterThread = before  # type: ignore[attr-defined]


def test_the_output_thread_has_its_queue_and_file() -> None:
    file = io.StringIO()
    writer = WriterThread(file)
    for name in WRITER_PRIVATE:
        assert hasattr(writer, name), f"WriterThread has no {name}"
    q: Any = writer._queue
    assert isinstance(q, queue.Queue) and writer._file is file


async def test_the_linux_driver_has_what_the_guarded_driver_uses() -> None:
    driver = LinuxDriver(App())
    for name in (*DRIVER_PRIVATE, "exit_event", "fileno", "process_message"):
        assert hasattr(driver, name), f"LinuxDriver has no {name}"
    for name in ("_sigtstp_application", "_sigcont_application", "run_input_thread"):
        assert callable(getattr(LinuxDriver, name)), name


class Tiny(App[None]):
    BINDINGS = [Binding("x", "hit", id="tiny.hit")]

    def __init__(self) -> None:
        super().__init__()
        self.hits = 0

    def compose(self) -> ComposeResult:
        with LateFocusTabs(id="tabs"):
            with TabPane("One", id="one"):
                yield Input(id="box-one")
            with TabPane("Two", id="two"):
                yield Input(id="box-two")

    def action_hit(self) -> None:
        self.hits += 1


async def test_binding_lookup_key_map_and_driver() -> None:
    app = Tiny()
    async with app.run_test() as pilot:
        assert "priority" in inspect.signature(App._check_bindings).parameters
        assert await check_bindings(app, "x") is True and app.hits == 1
        assert await check_bindings(app, "x", priority=True) is False  # not a priority one
        assert await check_bindings(app, "z") is False
        app.set_keymap({"tiny.hit": "y"})
        assert keymap_of(app)["tiny.hit"] == "y"
        assert driver_of(app) is not None and driver_of(app) is app._driver
        await pilot.pause()


def test_the_key_names_of_characters() -> None:
    assert character_to_key("+") == "plus"
    assert character_to_key("/") == "slash"
    assert character_to_key("a") == "a"


async def test_late_focus_news_does_not_switch_tabs_back() -> None:
    assert "_on_tab_pane_focused" in vars(TabbedContent), "TabbedContent lost the handler"
    assert "_on_tab_pane_focused" in vars(LateFocusTabs)
    app = Tiny()
    async with app.run_test() as pilot:
        tabs = app.query_one(LateFocusTabs)
        app.query_one("#box-one", Input).focus()
        await pilot.pause()
        tabs.active = "two"
        app.query_one("#box-two", Input).focus()
        await pilot.pause()
        # the news that box one was focused, arriving late, after box two took the focus
        one = app.query_one("#one", TabPane)
        tabs.post_message(TabPane.Focused(one))
        await pilot.pause()
        assert tabs.active == "two"
        # news that agrees with the focus still shows its tab (Textual's own handler)
        app.query_one("#box-one", Input).focus()
        await pilot.pause()
        assert tabs.active == "one"


async def test_the_loop_keeps_its_ready_callbacks() -> None:
    loop = asyncio.get_running_loop()
    assert hasattr(loop, "_ready"), "asyncio's loop has no _ready queue"
    await asyncio.sleep(0)
    loop.call_soon(lambda: None)
    assert loop_has_ready(loop)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert not loop_has_ready(loop)


async def test_the_private_names_the_tests_wait_on_and_read() -> None:
    """What ``memevo_tui.term.compat.testing`` takes from Textual: the toasts an app holds,
    a node's unhandled messages, a screen's pending layout, the footer's key and the
    toast widget."""
    from textual import events
    from textual.app import App
    from textual.widget import Widget

    from memevo_tui.term.compat.testing import (
        FooterKey,
        Toast,
        layout_pending,
        notifications,
        pending_messages,
    )

    assert issubclass(FooterKey, Widget) and issubclass(Toast, Widget)
    app: App[None] = App()
    async with app.run_test() as pilot:
        assert notifications(app) == []
        app.notify("first", title="One")
        app.notify("second")
        await pilot.pause()
        assert [(n.title, n.message) for n in notifications(app)] == [
            ("One", "first"),
            ("", "second"),
        ]
        await pilot.pause()
        assert not layout_pending(app.screen)
        app.screen.refresh(layout=True)
        assert layout_pending(app.screen)
        before = pending_messages(app.screen)
        app.screen.post_message(events.Hide())
        assert pending_messages(app.screen) == before + 1
