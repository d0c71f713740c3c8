"""The main screen: the eight views in tabs, the status line, and the keys between them.

Only Memories is built at start-up; each other view is built and mounted the first
time it is shown (``view``), which keeps the start-up's DOM and its restyles small.
It switches views, carries requests from one view to another (curate this
search result, undo this event, show this record, show this source's records)
and draws the status line. The views never reach into one another.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Header, TabbedContent, TabPane

from ..core.inbox import Line
from ..core.state import Change, DashboardState, Dialed, Failed, LiveChanged, LiveToggled, Warned
from ..core.text import one_line
from ..dialogs.inbox import InboxScreen
from ..term.compat.textual import LateFocusTabs
from ..views.base import BaseView
from ..views.dial import ask_moment, back_to_now, dial_past
from ..widgets.app_footer import AppFooter
from ..widgets.memory_list import MemoryList, RecordMenuRequested
from ..widgets.messages import (
    NOW,
    OpenScreen,
    ReloadWanted,
    ShowProvenance,
    ShowRecord,
    ShowView,
    StateChanged,
    StatusChanged,
)
from ..widgets.notices import dialog_closed, dialog_opened
from ..widgets.split import Split
from ..widgets.status_line import StatusLine
from ..widgets.virtual_list import VirtualList
from .registry import SCREENS, VIEWS

if TYPE_CHECKING:
    from ..core.scope import Scope


def _b(
    key: str,
    action: str,
    text: str,
    id: str,
    tip: str,
    *,
    show: bool = True,
    key_display: str | None = None,
) -> Binding:
    return Binding(key, action, text, show=show, key_display=key_display, id=id, tooltip=tip)


class Dashboard(Screen[None]):
    """The dashboard: Memories, Review, History, Learning, Search, Recall and Timeline."""

    NARROW = 110
    """Below this many columns the detail panes stack under their lists."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # The App's own actions come first: they work in every view.
        _b("q", "app.quit", "Quit", "app.quit", "Quit memevo-tui"),
        _b("question_mark", "app.help", "Help", "app.help",
           "This help: keys, states, filter syntax", key_display="?"),
        _b("slash", "filter", "Filter", "app.filter",
           "Filter this view (or type its query or prompt)", key_display="/"),
        *(view.binding for view in VIEWS),  # a key for each view
        _b("ctrl+space", "app.toggle_live", "Live", "app.live",
           "Pause or resume live updates", show=False),
        _b("t", "time_dial", "Time", "app.time",
           "The time dial: show the store as of another day (a date, or +30d)", show=False),
        _b("0", "now", "Now", "app.now", "Back to now from the time dial", show=False),
        *(screen.binding for screen in SCREENS),  # a key for each view over the tabs
        _b("at", "scope", "Scope", "app.scope",
           "Project scope: this project, all projects, or pick one (every view obeys it)",
           show=False, key_display="@"),
        _b("ctrl+r", "app.reload", "Reload", "app.reload", "Reload everything from the store",
           show=False),
        _b("escape", "escape", "Back", "app.escape",
           "Leave a text box; in a list, clear its filter; drop a conflict mark", show=False),
        _b("tab", "app.focus_next", "Next pane", "app.focus_next", "Next pane", show=False),
        _b("shift+tab", "app.focus_previous", "Previous pane", "app.focus_prev",
           "Previous pane", show=False),
    ]  # fmt: skip

    def __init__(self, state: DashboardState) -> None:
        super().__init__()
        self.state = state
        self._status_pending = False

    def compose(self) -> ComposeResult:
        state = self.state
        yield Header()
        with LateFocusTabs(id="tabs", initial="memories"):
            for view in VIEWS:
                with TabPane(view.title, id=view.id):
                    if view.id == "memories":  # the others are built when first shown
                        yield view.cls(state)
        yield StatusLine(id="status-line")
        yield AppFooter()

    def on_mount(self) -> None:
        self._narrow(self.app.size.width)

        def tell(change: Change) -> None:
            self.post_message(StateChanged(change))

        self.state.subscribe(tell)
        self.memories.active = True
        self.memories.focus_default()
        self.update_status()
        self.post_message(ReloadWanted())  # the first read, now that every view listens

    def on_screen_resume(self) -> None:
        """A dialog closed: the notices that waited for it are shown, and the focus is
        back in the view (a dialog opened while the terminal or tab had lost the focus
        left it on the tabs, the view's keys dead until a click)."""
        dialog_closed(self.app)
        self.call_after_refresh(self._refocus)

    def on_screen_suspend(self) -> None:
        dialog_opened(self.app)  # the notices on screen wait for it to close

    def _refocus(self) -> None:
        view, focused = self.views.get(self.active), self.focused
        if self.is_current and view and (focused is None or view not in focused.ancestors):
            view.focus_default()

    def _narrow(self, width: int) -> None:
        narrow = width < self.NARROW
        for split in self.query(Split):
            split.set_narrow(narrow)
        for status in self.query("LearningStatus"):
            status.set_class(narrow, "-narrow")

    def on_resize(self, event: events.Resize) -> None:
        self._narrow(event.size.width)

    @property
    def views(self) -> dict[str, BaseView]:
        """The views built so far, by tab id (each is built when first shown)."""
        return {
            pane.id or "": found
            for pane in self.query(TabPane)
            if (found := next(iter(pane.query(BaseView)), None)) is not None
        }

    async def view(self, tab: str) -> BaseView:
        """The view of ``tab``, built and mounted now if it has never been shown. A view
        hears of the state's changes once mounted, and reads what it shows when shown
        (``activated``), so one built late shows what one built at start-up would."""
        pane = self.query_one(f"TabPane#{tab}", TabPane)
        found = next(iter(pane.query(BaseView)), None)
        if found is not None:
            return found
        entry = next(entry for entry in VIEWS if entry.id == tab)
        built = entry.cls(self.state)
        await pane.mount(built)
        self._narrow(self.app.size.width)
        for keys in built.query(VirtualList):
            keys.set_writes_off(self.state.as_of is not None)
        return built

    @property
    def memories(self) -> BaseView:
        """The memory list's view (always built)."""
        return self.views["memories"]

    @property
    def active(self) -> str:
        return self.query_one("#tabs", TabbedContent).active

    # ------------------------------------------------------------ switching views

    async def action_show_tab(self, tab: str) -> None:
        previous = self.views.get(self.active)
        shown = await self.view(tab)
        handed = previous.handover(tab) if previous is not None else None
        if handed is not None:  # e.g. from a search, the recall preview explains it
            getattr(shown, handed[0])(*handed[1])
        self.query_one("#tabs", TabbedContent).active = tab
        shown.focus_default()

    async def action_ask(self, view: str, call: str, show: bool = False, *args: object) -> None:
        """Call a view's method by name (the palette's entries for one view's keys):
        the view built if it never was, and shown first when ``show``."""
        await self.on_show_view(ShowView(view, call, args, show=show))

    def action_open_screen(self, screen: str) -> None:
        self.post_message(OpenScreen(screen))

    def on_open_screen(self, message: OpenScreen) -> None:
        """A view over the tabs, opened by its registry entry (``SCREENS``)."""
        next(s for s in SCREENS if s.id == message.screen).open(self, *message.args)

    async def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        shown = await self.view(event.pane.id or "")  # a tab clicked before it was built
        for view in self.views.values():
            view.active = view is shown
        shown.activated()
        self.update_status()

    def action_escape(self) -> None:
        if not self.views[self.active].leave():
            for view in self.views.values():  # a pending pair's first record, from any view
                view.drop_pair_mark()

    def action_filter(self) -> None:
        self.views[self.active].start_filter()

    def action_yank(self, long: bool) -> None:
        """Copy from the list in focus, else from the view's main list."""
        view = self.views[self.active]
        focused = self.focused
        target = focused if isinstance(focused, VirtualList) else view.query(VirtualList).first()
        target.action_yank(long)

    def action_toggle_side(self) -> None:
        splits = self.views[self.active].query(Split)
        if splits:
            splits.first().action_toggle_side()

    def action_time_dial(self) -> None:
        ask_moment(self)

    def action_scope(self) -> None:
        """@: the next scope: the project started in, every project, one to pick."""
        following = self.state.scope.cycled()
        if following is None:
            self.action_pick_scope()
        else:
            self._scope(following)

    def action_pick_scope(self) -> None:
        """A menu of the projects pi knows (most records first), and every project."""
        from ..core.scope import ALL, Scope, origins_by_size
        from ..dialogs.menu import Menu

        state = self.state
        found = origins_by_size(state.rows)
        choices = [("all", f"All projects ({len(state.rows):,} records)")]
        choices += [(f"p{n}", f"{one_line(origin, 60)} ({count:,})")
                    for n, (origin, count) in enumerate(found)]  # fmt: skip
        legacy = sum(1 for r in state.rows if getattr(r, "scope", "") == "legacy")
        if legacy:  # pi's imported records, in no project: every view shows them alone
            choices.append(("legacy", f"No project: {legacy:,} legacy record(s)"))
            found.append(("legacy", legacy))
        current = next((f"p{n}" for n, (o, _) in enumerate(found)
                        if o == state.scope.project), "all")  # fmt: skip

        def picked(choice: str | None) -> None:
            if choice is not None:
                project = {"all": ALL, "legacy": "legacy"}.get(choice) or found[int(choice[1:])][0]
                self._scope(Scope(project, state.scope.home))

        self.app.push_screen(Menu("Show which project?", choices, current), picked)

    def _scope(self, scope: Scope) -> None:
        self.state.set_scope(scope)  # the app's title follows (MemevoApp.on_mount)
        self.notify(f"Showing {scope.name}", title="Project scope")
        self.update_status()

    def action_now(self) -> None:
        back_to_now(self)

    # ------------------------------------------------------------ one view's keys, by name

    async def action_curate(self, verb: str) -> None:
        """A curation verb from the palette: what its key does in the view shown."""
        await self.action_on_list(f"curate({verb!r})")

    async def action_on_list(self, action: str) -> None:
        """A record list's action from the palette, as its key runs it in the view shown:
        on the list in focus, else the view's first (marks included)."""
        view = self.views[self.active]
        focused = self.focused
        lists = [w for w in view.query(VirtualList) if "curate" in w.WRITES]
        target = focused if focused in lists else (lists[0] if lists else None)
        if target is None:
            self.notify("This acts on a list of records: Memories (m), Search (s), Recall (i) "
                        "or Review (w)", severity="warning")  # fmt: skip
            return
        if target.writes_off:  # greyed: the key would say why, and so does the palette
            self.post_message(VirtualList.WriteRefused())
            return
        await target.run_action(action)

    def action_mark(self) -> None:
        """Mark or unmark from the palette: in the memory list, as space does there."""
        if self.active != "memories":
            self.notify("Marks are made in the memory list (m)", severity="warning")
            return
        self.post_message(ShowView("memories", "action_mark", show=False))

    # ------------------------------------------------------------ requests between views

    def on_memory_list_curation_requested(self, message: MemoryList.CurationRequested) -> None:
        """A curation key in Search or Recall: the record as loaded now, curated in place."""
        row = message.row
        current = self.state.find(row.id) if row is not None else None
        group = [self.state.find(r.id) or r for r in message.group]
        self.post_message(
            ShowView("memories", "curate_asked", (current or row, message.verb, group), show=False)
        )

    def on_show_provenance(self, message: ShowProvenance) -> None:
        """P on any list of records (enter in the memory list): where it came from."""
        from ..views.provenance import ProvenanceScreen

        state, memory_id = self.state, message.memory_id
        self.app.push_screen(ProvenanceScreen(memory_id, lambda: state.provenance(memory_id)))

    def on_record_menu_requested(self, message: RecordMenuRequested) -> None:
        """``enter`` or ``.`` on a record: the menu of what can be done to it."""
        from ..widgets.keys import key_for
        from .record_menu import COPY, PROVENANCE, VERB, VIEW, record_menu, view_query

        source, record = message.source, message.record
        offered = {b.id for b in source.BINDINGS if isinstance(b, Binding) and b.id}

        async def picked(choice: str | None) -> None:
            current = self.state.find(record.id)
            row = current if current is not None else record
            if choice == PROVENANCE:
                self.on_show_provenance(ShowProvenance(record.id))
            elif choice and choice.startswith(VIEW):
                view = choice.removeprefix(VIEW)
                await self.on_show_view(ShowView(view, "show_query", (view_query(view, record),)))
            elif choice and choice.startswith(VERB):
                await self.on_show_view(
                    ShowView("memories", "curate_asked", (row, choice.removeprefix(VERB), []),
                             show=False)
                )  # fmt: skip
            elif choice and choice.startswith(COPY):
                source.action_yank(choice.removeprefix(COPY) == "text")

        self.app.push_screen(record_menu(record, offered, lambda b: key_for(self.app, b)), picked)

    async def on_show_view(self, message: ShowView) -> None:
        """A view's request for another, routed by the registry's id (``ShowView``)."""
        await self._turn_dial(message.dial)
        shown = await self.view(message.view)
        if message.call:
            getattr(shown, message.call)(*message.args)
        if not message.show:
            return
        await self.action_show_tab(message.view)
        if message.focus:
            shown.focus_now(shown.query_one(message.focus))

    async def _turn_dial(self, dial: float | str | None) -> bool:
        """Turn the time dial as a request says (``NOW``, a past moment, or None: leave
        it); False when a past moment was refused."""
        if dial == NOW:
            back_to_now(self)
        elif isinstance(dial, float | int):
            await dial_past(self, float(dial))
            return self.state.past is not None
        return True

    async def on_show_record(self, message: ShowRecord) -> None:
        """Show a record in the memory list, clearing what hides it (the dial turned
        first when the request says so)."""
        if not await self._turn_dial(message.dial):
            return  # refused: the toast said why
        if not self.memories.reveal(message.memory_id):
            return
        await self.action_show_tab("memories")
        self.notify(
            f"p pins, e corrects, r resolves, 3 marks accurate; {message.back}",
            title=f"Showing {message.memory_id}",
        )

    def open_inbox(self, heading: str, lines: Sequence[Line]) -> None:
        """Offer what changed since the last visit; a line opens what it is about."""

        async def picked(line: Line | None) -> None:
            if line is None:
                return
            ids = ",".join(line.ids)
            if line.about == "diff" and line.since is not None:
                self.on_open_screen(OpenScreen("diff", *line.since))
            elif line.about == "sources":
                await self.on_show_view(ShowView("learning", "show_query", (f"id:{ids}",)))
            else:
                await self.on_show_view(ShowView("memories", "open_for", (f"id:{ids}",)))

        self.app.push_screen(InboxScreen(heading, lines), picked)

    # ------------------------------------------------------------ the status line

    def on_virtual_list_write_refused(self, message: VirtualList.WriteRefused) -> None:
        why = self.state.write_refusal()
        if why:
            self.notify(why, title="Nothing written", severity="warning")

    def on_state_changed(self, message: StateChanged) -> None:
        if isinstance(message.change, Warned):
            self.notify(message.change.message, title="Recall", severity="warning",
                        markup=False)  # fmt: skip
        if isinstance(message.change, Dialed):  # the write keys, greyed while dialed away
            for keys in self.query(VirtualList):
                keys.set_writes_off(self.state.as_of is not None)
        if isinstance(message.change, LiveChanged | LiveToggled | Failed | Dialed):
            self.update_status()

    def on_status_changed(self, message: StatusChanged) -> None:
        self.update_status()

    def update_status(self) -> None:
        """Redraw the status line once the messages in hand are handled: a change that
        reaches several views asks for it several times, and it is drawn once."""
        if not self._status_pending:
            self._status_pending = True
            self.call_later(self._draw_status)

    def _draw_status(self) -> None:
        """The active view's figures, whether the store is read-only, and the indicator."""
        self._status_pending = False
        state = self.state
        active = self.active
        pane = self.query_one(f"TabPane#{active}", TabPane) if active else None
        view = pane.query_one(BaseView) if pane is not None else self.memories
        parts = view.status_parts()
        if state.read_only:
            parts.append(f"READ-ONLY: {state.read_only_reason}")
        self.query_one(StatusLine).show(
            parts,
            live=state.live,
            last_change=state.last_change,
            problem=state.problem,
            as_of=state.as_of,
            replayed=state.past is not None,
        )
