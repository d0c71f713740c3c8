"""What every view shares: the state it reads, how it hears of changes, and its hooks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual import events
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Input
from textual.worker import WorkerState

from ..core.filters import Field, Query, parse, say
from ..core.state import Change, DashboardState
from ..curator import Curator
from ..widgets.debounced_input import DebouncedInput
from ..widgets.filter_box import FilterBox
from ..widgets.messages import PurgeAsked, StateChanged
from ..widgets.virtual_list import VirtualList

IN_FLIGHT = (WorkerState.PENDING, WorkerState.RUNNING)
"""A worker still working (the views' busy checks, and the dashboard's host of the
Curator)."""


class BaseView(Vertical):
    """A container that composes one view's widgets and owns its keys and workers.

    Subclasses override the hooks: ``state_changed`` (the shared state changed),
    ``activated`` (its tab was shown), ``leave`` (esc), ``status_parts`` (its
    part of the status line) and ``busy`` (work in flight, for tests that wait).
    """

    FOCUS: ClassVar[str] = ""
    """Selector of the widget that takes focus when the view is shown (its list)."""
    BOX: ClassVar[str] = ""
    """Selector of the view's text box: its filter, query or prompt (``/`` focuses it)."""
    LIST: ClassVar[str] = ""
    """Selector of the list esc returns to from the box (default: ``FOCUS``)."""
    TYPE_TO_BEGIN: ClassVar[bool] = False
    """The box is a query or a prompt that the list's keys can begin (Search, Recall):
    the view opens on its list, so every view key stays live until the user begins."""

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state = state
        self.active = False
        """True while the view's tab is shown (the App sets it)."""
        self._unsubscribe: Callable[[], None] | None = None

    @property
    def curator(self) -> Curator:
        """The app's Curator: every write goes through it."""
        curator = getattr(self.app, "curator", None)
        assert isinstance(curator, Curator), "a view runs inside the memevo-tui app"
        return curator

    def on_mount(self) -> None:
        def tell(change: Change) -> None:
            self.post_message(StateChanged(change))

        self._unsubscribe = self.state.subscribe(tell)

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def on_state_changed(self, message: StateChanged) -> None:
        if self.is_attached:
            self.state_changed(message.change)

    def on_purge_asked(self, message: PurgeAsked) -> None:
        """X on a list of records: the Curator previews the purge, then writes it."""
        message.stop()
        self.curator.purge(message.memory_id)

    # ------------------------------------------------------------ hooks

    def state_changed(self, change: Change) -> None:
        """React to a change of the shared state."""

    def activated(self) -> None:
        """The view's tab was just shown."""

    def leave(self) -> bool:
        """esc: leave the text box for the list; in the list, clear an active filter.
        False when there was nothing to leave."""
        if self.leave_box():
            return True
        if self.filtered:
            self.clear_filter()
            return True
        return False

    def leave_box(self) -> bool:
        """From a text box of this view, back to its list; False when not in one."""
        focused = self.screen.focused
        if isinstance(focused, Input) and self in focused.ancestors:
            self.focus_now(self.query_one(self.LIST or self.FOCUS))
            return True
        return False

    @property
    def filtered(self) -> bool:
        """True while a filter narrows the view's list (esc clears it)."""
        return False

    def clear_filter(self) -> None:
        """Show the whole list again."""

    def start_filter(self) -> None:
        """``/``: type in the view's box."""
        if self.BOX:
            self.focus_now(self.query_one(self.BOX))

    def status_parts(self) -> list[str]:
        """This view's part of the status line."""
        return []

    def handover(self, to: str) -> tuple[str, tuple[object, ...]] | None:
        """What this view hands to view ``to`` when the user goes there from it: the
        method of ``to`` to call, and its arguments (None: nothing)."""
        return None

    def reveal(self, memory_id: str) -> bool:
        """Put the cursor on a record (a request from another view); False when this
        view cannot show it."""
        return False

    def drop_pair_mark(self) -> bool:
        """Forget a pending pair's first record (esc from any view); False when none."""
        return False

    @property
    def busy(self) -> bool:
        """True while a worker of this view or of one of its widgets is in flight."""
        return any(
            w.state in IN_FLIGHT and (w.node is self or self in w.node.ancestors)
            for w in self.app.workers
        )

    # ------------------------------------------------------------ helpers

    def _filtered_list(self, focused: Widget) -> VirtualList[Any] | None:
        """The list a filter box filters, when ``focused`` is that box."""
        if not isinstance(focused.parent, FilterBox):
            return None
        found = self.query_one(self.LIST or self.FOCUS)
        return found if isinstance(found, VirtualList) else None

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        rows = self._filtered_list(event.widget)
        if rows is not None:
            rows.hold_anchor()  # typing a filter starts here

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        rows = self._filtered_list(event.widget)
        if rows is not None:
            rows.drop_anchor()

    def on_key(self, event: events.Key) -> None:
        """With ``TYPE_TO_BEGIN``, begin the query in the empty box: ``enter`` while
        nothing is listed, or a printable key no binding takes, typed into it (``/`` is
        the filter key of every view)."""
        box = self._box_to_begin()
        if box is None:
            return
        char = event.character
        if event.key == "enter" and not self._listed():
            char = ""
        elif not (char and char.isprintable()) or event.key in self.screen.active_bindings:
            return
        self._begin(event, box, char)

    def on_paste(self, event: events.Paste) -> None:
        """With ``TYPE_TO_BEGIN``, a paste on the list begins the query with its first
        line, as the box itself takes a paste."""
        box = self._box_to_begin()
        if box is not None:
            self._begin(event, box, next(iter(event.text.splitlines()), ""))

    def _box_to_begin(self) -> Input | None:
        if not (self.TYPE_TO_BEGIN and self.active):
            return None
        box = self.query_one(self.BOX, Input)
        return None if self.screen.focused is box or box.value else box

    def _listed(self) -> bool:
        found = self.query_one(self.LIST)
        return bool(getattr(found, "rows", ()))

    def _begin(self, event: events.Key | events.Paste, box: Input, text: str) -> None:
        event.stop()
        event.prevent_default()
        self.focus_now(box)
        box.insert_text_at_cursor(text)

    def focus_now(self, widget: Widget) -> None:
        """Move focus before the next queued key is handled.

        ``Widget.focus()`` defers the change, so keys typed (or pasted) right
        after ``/`` would still reach the list and run its single-key actions.
        """
        self.screen.set_focus(widget)

    def focus_default(self) -> None:
        if self.FOCUS:
            self.focus_now(self.query_one(self.FOCUS))


class FilteringView(BaseView):
    """A view whose list has its own filter box (``BOX``) of ``FIELDS`` tokens."""

    FIELDS: ClassVar[tuple[Field, ...]] = ()

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(state, id=id)
        self.filter_query = Query()
        self.filter_text = ""
        """The filter as typed."""

    def refilter(self) -> None:
        """Show the list again through ``filter_query``."""

    @property
    def filtered(self) -> bool:
        q = self.filter_query
        return bool(q.words or q.fields or q.errors)

    def clear_filter(self) -> None:
        box = self.query_one(DebouncedInput)
        box.value = ""
        box.cancel()
        self._filter("")

    @property
    def busy(self) -> bool:
        return super().busy or self.query_one(DebouncedInput).pending

    def on_debounced_input_settled(self, event: DebouncedInput.Settled) -> None:
        event.stop()
        if event.stale:  # typed on, or submitted, since
            return
        self._filter(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._filter(event.value)
        self.focus_default()

    def _filter(self, text: str) -> None:
        self.filter_text = text
        self.filter_query = parse(text, self.FIELDS)
        self.query_one(FilterBox).show_error(say(self.filter_query.errors))
        self.refilter()

    def show_query(self, text: str) -> None:
        """Filter by ``text`` at once (a request from another view, or the inbox)."""
        box = self.query_one(DebouncedInput)
        box.value = text
        box.cancel()
        self._filter(text)
