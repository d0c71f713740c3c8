"""The Turns view: what pi injected into each past prompt of its sessions, then and now.

The sessions come first, newest first, with how many prompts each had and how many
got memories; ``enter`` lists a session's prompts in branch order, each with the
records injected then (the store replayed to the prompt's moment, the branch's
earlier user texts folded in as pi does) and now. ``enter`` on a prompt opens the
recall preview on it, its earlier turns set and the time dial at its moment; ``esc``
goes back to the sessions. The replay runs in a worker, on a connection of its own.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Static

from store import MAX_QUERY_BYTES, RECALL_VERSION, StoreError, Turn

from ..core.filters import Field, Query
from ..core.state import Change, DashboardState, OwnWrite, Reloaded, Scoped
from ..core.turnlog import SessionTurns
from ..widgets.filter_box import FilterBox
from ..widgets.messages import ShowView, StatusChanged, StoreFailed
from ..widgets.split import Split
from ..widgets.turn_list import SessionList, TurnDetail, TurnList
from .base import FilteringView

FIELDS = (
    Field("project", ("p", "o", "origin")),
    Field("record", ("r", "id"), whole=True),
)


def prompt_matches(turn: Turn, project: str, q: Query) -> bool:
    """Does a prompt (its turn, in its project) pass the Turns filter? ``record:ID``:
    pi injected that record (an id or its start) into it then."""
    if (projects := q.values("project")) and not any(p in project.casefold() for p in projects):
        return False
    if (ids := q.values("record")) and not any(
        i.startswith(want) for want in ids for i in turn.then or ()
    ):
        return False
    folded = turn.prompt.text.casefold()
    return all(w in folded for w in q.words)


class TurnsView(FilteringView):
    """The sessions, or one session's prompts beside the highlighted one in full. ``/``
    filters both by the prompts' words and ``project:``."""

    FOCUS = "#session-list"
    FIELDS = FIELDS
    BOX = "#turns-filter"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "f",
            "whole",
            "Whole prompt",
            id="turns.whole",
            show=False,
            tooltip="The highlighted prompt in full, page by page",
        ),
    ]

    @dataclass
    class Loaded(Message):
        sessions: list[SessionTurns] | None
        """None: the replay failed (reported apart)."""
        early: bool = False
        """The last replay's answers, shown while this one checks them (a warm open)."""
        stopped: str = ""
        """Why the replay ended without an answer (the summary line says it)."""

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(state, id=id)
        self.sessions: list[SessionTurns] = []
        self.opened: SessionTurns | None = None
        self._loading = False
        self._stale = True

    def compose(self) -> ComposeResult:
        yield Static("", id="turns-summary", markup=False)
        yield FilterBox(
            delay=0.12,
            placeholder="/ filter: words of a prompt, project:webshop",
            id="turns-filter",
        )
        with Split(width=45, id="turns-main"):
            yield SessionList(id="session-list")
            yield TurnList(id="turn-list")
            yield TurnDetail(id="turn-detail")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(TurnList).display = False

    def activated(self) -> None:
        if self._stale and not self._loading:
            self.load()

    def state_changed(self, change: Change) -> None:
        if isinstance(change, Scoped):
            self.refilter()
            self._summary()
        elif isinstance(change, OwnWrite | Reloaded):
            self._stale = True  # "now" moved: replayed again when next shown
            if self.active and not self._loading:
                self.load()

    @property
    def busy(self) -> bool:
        return super().busy or self._loading

    @work(exclusive=True, group="turns", exit_on_error=False)
    async def load(self) -> None:
        """The replay the state keeps (``core.state.replay``), joined if it runs: the
        view shows its progress and renders its answer; it never produces it."""
        self._loading = True
        self._stale = False
        self._summary("replaying pi's sessions on the store as it was at each prompt…")
        state = self.state
        loop = asyncio.get_running_loop()

        def show(line: str) -> None:
            if self.is_attached and self._loading:
                self._summary(line)

        def progress(done: int, total: int) -> None:  # from the replay's own thread
            line = f"replaying pi's sessions on the store as it was: {done} of {total} prompts…"
            loop.call_soon_threadsafe(show, line)

        def early(found: list[SessionTurns]) -> None:  # from the replay's thread too
            loop.call_soon_threadsafe(self.post_message, self.Loaded(found, early=True))

        try:
            sessions = await state.replay.replayed(progress, early)
        except StoreError as exc:
            self.post_message(StoreFailed(exc))
            self.post_message(self.Loaded(None, stopped=f"{exc.cause}: {exc}"))
            return
        except Exception as exc:  # a bug in the replay: said, and the view not left waiting
            self.notify(f"pi's sessions could not be replayed: {type(exc).__name__}",
                        title="Turns", severity="error", markup=False)  # fmt: skip
            self.post_message(self.Loaded(None, stopped=f"a bug: {type(exc).__name__}"))
            return
        self.post_message(self.Loaded(sessions))

    def on_turns_view_loaded(self, message: Loaded) -> None:
        if message.early and not self._loading:
            return  # the replay's own answer came first
        self._loading = message.early
        if message.sessions is None:
            self._summary(f"the replay stopped ({message.stopped}); ctrl+r reloads")
            return
        self.sessions = message.sessions
        session_list = self.query_one(SessionList)
        session_list.empty_text = self._empty_line()
        session_list.set_rows(self._shown_sessions())
        if self.opened is not None:  # still showing a session: its turns as replayed now
            again = next((s for s in self.sessions if s.key == self.opened.key), None)
            if again is not None:
                self._open(again, focus=False)
        self._summary(early=message.early)
        self.post_message(StatusChanged())

    def _summary(self, line: str = "", *, early: bool = False) -> None:
        """``line``, or what the view shows (``early``: the last replay's answers)."""
        if early:
            line = f"{self._counts()} · the last replay's answers; checking them against the store…"
        elif not line:
            line = (f"{self._counts()} · as pi {RECALL_VERSION} would recall · sessions from "
                    f"{self.state.sessions} ({self.state.sessions_why})")  # fmt: skip
        self.query_one("#turns-summary", Static).update(line)

    def _counts(self) -> str:
        """The sessions in scope, their prompts, and what they got."""
        scope = self.state.scope
        sessions = self._in_scope()
        turns = sum(len(s.turns) for s in sessions)
        got = sum(s.with_memories for s in sessions)
        differ = sum(s.differing for s in sessions)
        unknown = sum(s.unknown for s in sessions)
        where = "" if scope.everything else f" in {scope.name}"
        return (
            f"{len(sessions)} session(s){where}, {turns} prompt(s): {got} got memories, "
            f"{differ} would get something else now"
            + (f", {unknown} before the store's exact past (?)" if unknown else "")
        )

    def status_parts(self) -> list[str]:
        if self.opened is not None:
            s = self.opened.session
            return [f"{len(s.prompts)} prompt(s) of {s.session_id[:8]}: esc back to sessions"]
        shown = len(self.query_one(SessionList).rows)
        return [f"{shown} session(s) of pi; enter lists a session's prompts"]

    # ------------------------------------------------------------ moving in

    def on_session_list_opened(self, message: SessionList.Opened) -> None:
        message.stop()
        self._open(message.row, focus=True)

    def _in_scope(self) -> list[SessionTurns]:
        """The sessions pi ran in the project scope's project (every one: all)."""
        scope = self.state.scope
        return [s for s in self.sessions if scope.covers(s.session.project)]

    def _shown_sessions(self) -> list[SessionTurns]:
        q, sessions = self.filter_query, self._in_scope()
        if not (q.words or q.fields):
            return sessions
        return [s for s in sessions if any(
            prompt_matches(t, s.session.project, q) for t in s.turns
        )]  # fmt: skip

    def _empty_line(self) -> str:
        """What an empty list says, true to why it is empty: no session files; no prompt
        matching the filter; a record pi never injected (``record:ID``)."""
        sessions = self._in_scope()
        if not self.sessions:
            return (f"No pi session files under {self.state.sessions} "
                    f"({self.state.sessions_why}; --sessions DIR reads another).")  # fmt: skip
        prompts = sum(len(s.turns) for s in sessions)
        counted = f"{prompts} prompt(s) in {len(sessions)} session(s)"
        if records := self.filter_query.values("record"):
            return f"pi never injected {', '.join(records)} in the {prompts} prompt(s) replayed."
        if self.filter_text:
            return f"No prompt matches '{self.filter_text}' ({counted})."
        every = sum(len(s.turns) for s in self.sessions)
        return (f"No prompts in this scope ({every} prompt(s) in {len(self.sessions)} "
                "session(s) in every project: @ changes the scope).")  # fmt: skip

    def refilter(self) -> None:
        empty = self._empty_line()
        self.query_one(SessionList).empty_text = empty
        self.query_one(TurnList).empty_text = empty
        self.query_one(SessionList).set_rows(self._shown_sessions())
        if self.opened is not None:
            self._open(self.opened, focus=False)
        self.post_message(StatusChanged())

    def _open(self, row: SessionTurns, *, focus: bool) -> None:
        self.opened = row
        turn_list = self.query_one(TurnList)
        q, project = self.filter_query, row.session.project
        turn_list.set_rows([t for t in row.turns if prompt_matches(t, project, q)])
        self.query_one(SessionList).display = False
        turn_list.display = True
        if focus:
            self.focus_now(turn_list)
        self.query_one(TurnDetail).show(turn_list.highlighted)
        self.post_message(StatusChanged())

    def on_session_list_highlighted(self, message: SessionList.Highlighted) -> None:
        if self.opened is None:
            self.query_one(TurnDetail).show_session(message.row)

    def on_turn_list_highlighted(self, message: TurnList.Highlighted) -> None:
        self.query_one(TurnDetail).show(message.row)

    def on_turn_list_opened(self, message: TurnList.Opened) -> None:
        message.stop()
        p = message.row.prompt
        # the recall preview on it, its earlier turns folded in, the dial at its moment
        text = p.text[: 4 * MAX_QUERY_BYTES]  # pi reads no more of it (redacted, clipped)
        self.post_message(ShowView("recall", "ask_with", (text, p.recent),
                                   dial=p.moment_ms, focus="#recall-list"))  # fmt: skip

    def action_whole(self) -> None:
        """f: the highlighted prompt in full, page by page (a 50 MB prompt too)."""
        row = self.query_one(TurnList).highlighted if self.opened is not None else None
        if row is None:
            self.notify("Open a session (enter) and highlight a prompt first", title="Turns")
            return
        from ..dialogs.pager import Pager

        self.app.push_screen(Pager("The prompt", row.prompt.text))

    def focus_default(self) -> None:
        shown = TurnList if self.opened is not None else SessionList
        self.focus_now(self.query_one(shown))

    def leave(self) -> bool:
        """esc: out of the filter box; from a session's prompts back to the sessions;
        then the filter cleared."""
        if self.leave_box():
            return True
        if self.opened is None:
            if self.filtered:
                self.clear_filter()
                return True
            return False
        self.opened = None
        session_list = self.query_one(SessionList)
        self.query_one(TurnList).display = False
        session_list.display = True
        self.focus_now(session_list)
        self.query_one(TurnDetail).show_session(session_list.highlighted)
        self.post_message(StatusChanged())
        return True
