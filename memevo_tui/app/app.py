"""The memevo-tui application: the store's lifecycle, live polling and the global keys.

Each view (``views/``) owns its widgets, keys, workers and messages; they share
one ``DashboardState``, and the main screen (``dashboard.py``) switches
between them. The App opens, reads and closes the store, polls for commits by
other connections, and holds the keymap, help and the command palette.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from textual import events, work
from textual.app import App
from textual.binding import BindingType
from textual.driver import Driver
from textual.filter import LineFilter
from textual.notifications import SeverityLevel

from store import LONE_SURROGATE, Clock, Memory, MemoryLoad, Replaced, StoreError, system_clock

from ..core.appstate import Visit
from ..core.live import INTERVAL, ChangePoller
from ..core.state import DashboardState, Scoped
from ..core.text import one_line, plain_lines, visible
from ..core.visits import settle_journal, since_last_visit
from ..curator import Curator
from ..term.terminal import leave_on_signals
from ..widgets.inert import InertText
from ..widgets.keys import reopen_hint
from ..widgets.messages import (
    InboxReady,
    LiveDelta,
    ReloadWanted,
    StoreFailed,
    StoreLoaded,
    StoreRecovered,
)
from ..widgets.notices import HeldNotices, Notice
from .asking import DashboardHost
from .commands import MemevoCommands
from .dashboard import Dashboard
from .keymap import PALETTE, check_keymap, keymap_path, load_keymap
from .resources import stylesheet
from .typeahead import run_binding_now, split_alt


class MemevoApp(App[None]):
    """See, curate and correct what pi remembers."""

    CSS_PATH = [stylesheet("app.tcss")]
    TITLE = "memevo"
    COMMANDS = {MemevoCommands}  # Textual's own entries too, after the dashboard's
    BINDINGS: ClassVar[list[BindingType]] = [PALETTE]

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
        handle_signals: bool = False,
        remember: bool = True,
        driver_class: type[Driver] | None = None,
    ) -> None:
        super().__init__(driver_class=driver_class)
        self.handle_signals = handle_signals
        self.state = DashboardState(
            db_path, read_only=read_only, clock=clock, new_id=new_id, remember=remember
        )
        self.poller = ChangePoller(self.state)
        self.curator = Curator(DashboardHost(self), self.state)
        """Every write the dashboard makes goes through it."""
        self.label = label
        self.live_demo = live_demo
        self._polling = False
        self._learner_stop = asyncio.Event()
        problems: list[str] = []
        if keymap is None:
            keymap, error = load_keymap(keymap_path())
            problems += [error] if error else []
        if keymap:  # every screen's keys, and its module, are read only for a key map
            from .keygroups import scopes
        self._user_keymap, unusable = check_keymap(keymap, scopes()) if keymap else ({}, [])
        self._keymap_problems = problems + unusable
        self.sub_title = self.short_path
        self._inert, self.held_notices = InertText(), HeldNotices(self.show_notice)

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then ``InertText``: no drawn text is a control sequence."""
        return [*super().get_line_filters(), self._inert]

    def show_title(self) -> None:
        """The title bar: the store, read-only and why, and the project scope (when it is
        one project; nothing said is every project)."""
        state = self.state
        read_only = f" (read-only: {state.read_only_reason})" if state.read_only else ""
        scope = "" if state.scope.everything else f" · project {state.scope.name}"
        self.sub_title = one_line(f"{self.short_path}{read_only}{scope}")

    @property
    def short_path(self) -> str:
        """The store's label, or its file and directory: enough to recognise it."""
        path = self.state.db_path
        return one_line(self.label or f"{path.parent.name}/{path.name}")

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Show a notice (every ``notify`` of a widget or screen ends here). Its text is
        never markup: notices quote the store, so the message and title are shown
        literally, every control, bidi and invisible character made visible. Over a
        dialog, a notice that only informs waits for it to close (``HeldNotices``)."""
        notice = Notice(plain_lines(message), one_line(title), severity, timeout)
        self.held_notices.offer(self.screen, notice)

    def show_notice(self, n: Notice) -> None:
        super().notify(n.message, title=n.title, severity=n.severity, timeout=n.timeout,
                       markup=False)  # fmt: skip

    def copy_to_clipboard(self, text: str) -> None:
        """Copy ``text`` as it reads on screen: a control, bidi or invisible character
        as its visible stand-in (never raw ESC, BEL or an OSC sequence into the
        clipboard, nor into the terminal's OSC 52), line breaks kept; a lone surrogate
        (valid in a JavaScript string, not in UTF-8) as U+FFFD, as Node encodes it."""
        shown = visible(text, keep_newlines=True)
        super().copy_to_clipboard(LONE_SURROGATE.sub("\ufffd", shown))

    def get_default_screen(self) -> Dashboard:
        return Dashboard(self.state)

    def on_mount(self) -> None:
        self.prefetch()  # the store opens while the dashboard is built
        self.state.subscribe(
            lambda change: self.show_title() if isinstance(change, Scoped) else None
        )
        if self.handle_signals:
            leave_on_signals(self)
        if self._user_keymap:
            self.set_keymap(self._user_keymap)
        if problems := self._keymap_problems:
            self.notify("\n".join(problems), title=f"Key map: {len(problems)} problem(s)",
                        severity="warning", timeout=30)  # fmt: skip

    async def on_event(self, event: events.Event) -> None:
        for each in split_alt(self, event) or (event,):  # ESC m read as alt+m: both keys
            if await run_binding_now(self, each):  # a key typed ahead waits for this one
                self.app_focus = True
                continue
            await super().on_event(each)

    def exit(self, *args: Any, **kwargs: Any) -> None:
        """Leave (q, a signal, a lost terminal), ending an editor still running (e)."""
        from ..dialogs.correct import end_editors

        end_editors()
        super().exit(*args, **kwargs)

    # ------------------------------------------------------------ the store

    @work(group="prefetch", exit_on_error=False)
    async def prefetch(self) -> None:
        await self.state.prefetch()

    @work(exclusive=True, group="load", exit_on_error=False)
    async def load_store(self) -> None:
        async def first_page(load: MemoryLoad[Memory], total: int) -> None:
            painted = asyncio.Event()
            self.post_message(StoreLoaded(load, partial=True, total=total))
            self.call_after_refresh(lambda: self.call_after_refresh(painted.set))
            await painted.wait()

        try:
            load, last_rowid = await self.state.read(first_page)
        except StoreError as exc:
            self.post_message(StoreFailed(exc))
            return
        total = len(load.memories) + len(load.corrupt)
        self.post_message(StoreLoaded(load, total=total, last_rowid=last_rowid))

    def on_store_loaded(self, message: StoreLoaded) -> None:
        m, state = message, self.state
        state.replace(m.load, partial=m.partial, total=m.total, last_rowid=m.last_rowid)
        self.show_title()
        if not message.partial and not self._polling:
            self._polling = True
            self.settle_journal()
            self.offer_inbox()
            self.set_interval(INTERVAL, self.live_tick)
            if self.live_demo:
                self.run_learner()

    def on_store_failed(self, message: StoreFailed) -> None:
        error = message.error
        text = str(error)
        if isinstance(error, Replaced):  # the file held is not the one at the path
            text += f"; {reopen_hint(self)}"
        if text != self.state.failure:  # one toast per problem, not one per poll
            self.notify(text, title=f"Store error: {error.cause}", severity="error", timeout=30)
        self.state.fail(text, error.cause)

    def on_store_recovered(self, message: StoreRecovered) -> None:
        self.state.recovered()

    def on_reload_wanted(self, message: ReloadWanted) -> None:
        self.load_store()

    def action_reload(self) -> None:
        self.load_store()
        self.notify("Reloaded from the store")

    @work(group="journal", exit_on_error=False)
    async def settle_journal(self) -> None:
        """Say if the state directory cannot be used, or which bulk actions a killed
        process left cut short (``visits.settle_journal`` completes them)."""
        problem, lines = await settle_journal(self.state)
        if problem is not None:
            self.notify(f"Batch undo and the last visit are off: {problem}",
                        title="State directory", severity="warning", timeout=15)  # fmt: skip
        elif lines:
            lines.append("History (h) shows them as one entry; u there undoes them")
            self.notify("\n".join(lines), title="Bulk action cut short", severity="warning",
                        timeout=30)  # fmt: skip

    @work(group="inbox", exit_on_error=False)
    async def offer_inbox(self) -> None:
        """What changed since the last visit, if this store was shown before."""
        found = await since_last_visit(self.state)
        if found is not None:
            self.post_message(InboxReady(*found))

    def on_inbox_ready(self, message: InboxReady) -> None:
        screen = self.screen
        if isinstance(screen, Dashboard):
            screen.open_inbox(message.heading, message.lines)

    async def on_unmount(self) -> None:
        self._learner_stop.set()
        state = self.state
        if state.loaded and state.remembered is not None:  # the next visit starts here
            state.remembered.save_visit(Visit(state.last_rowid, state.clock()))
        await state.close()

    def action_toggle_live(self) -> None:
        self.state.set_live(not self.state.live)
        self.notify("Live updates resumed" if self.state.live else "Live updates paused")
        if self.state.live:
            self.live_tick()

    def live_tick(self) -> None:
        """One tick of the live timer: what other connections committed, read."""
        if self.state.live and self.state.store is not None and self.state.loaded:
            self.check_changes()

    @work(exclusive=True, group="live", exit_on_error=False)
    async def check_changes(self) -> None:
        try:
            delta = await self.poller.poll()
        except StoreError as exc:  # the store turned corrupt, unreadable or busy under us
            self.post_message(StoreFailed(exc))
            return
        if delta is not None and self.state.failure is not None:
            self.post_message(StoreRecovered())  # it read the store again: the problem is over
        if delta is not None:
            self.post_message(LiveDelta(delta))

    def on_live_delta(self, message: LiveDelta) -> None:
        d = message.delta
        self.state.live_changed(d.events, d.rows, d.at)

    @work(group="learner", exit_on_error=False)
    async def run_learner(self) -> None:
        """The demo learner: pi-shaped learning runs on its own connection."""
        from store import learn_forever

        self.notify("Demo learner running: watch the Learning tab (l) and the list")
        await learn_forever(self.state.db_path, clock=self.state.clock, stop=self._learner_stop)

    def action_help(self) -> None:  # help's modules are imported when first asked for
        from ..dialogs.help import HelpScreen, help_text
        from .keygroups import key_groups

        self.push_screen(HelpScreen(help_text(key_groups(), self._user_keymap)))


__all__ = ["MemevoApp"]
