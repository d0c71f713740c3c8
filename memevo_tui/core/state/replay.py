"""pi's sessions replayed, once, for every view (no Textual): the Turns view's rows,
each record's recall log, and the proof of a fix all read the one replay here, started
in the background when the store has loaded, or when first asked for, whichever comes
first; a later request joins the one running. The views render it; none produces it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..turnlog import SessionTurns
    from . import DashboardState

Progress = Callable[[int, int], None]
"""``progress(done, total)``, called from the replay's own thread."""
Early = Callable[["list[SessionTurns]"], None]


def _quiet(task: asyncio.Task[list[SessionTurns]]) -> None:
    if not task.cancelled():
        task.exception()


class SessionReplay:
    """The replay of pi's sessions on the dashboard's store: its answer, and the run."""

    def __init__(self, state: DashboardState) -> None:
        self.state = state
        self.sessions: list[SessionTurns] | None = None
        """The last replay's sessions and turns (None: none finished yet)."""
        self.stale = False
        """The store changed since (a write of ours, a reload): "now" moved."""
        self._running: asyncio.Task[list[SessionTurns]] | None = None
        self._progress: list[Progress] = []
        self._early: list[Early] = []
        self._early_found: list[SessionTurns] | None = None
        """The last replay's answers the running one began with (a late joiner gets them)."""

    def start(self) -> None:
        """Begin the replay in the background, if pi's session folder is there and none
        ran yet (the store has loaded): what every view may read, known before asked."""
        if self.sessions is not None or self.running or not self.state.sessions.is_dir():
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        task = asyncio.ensure_future(self.replayed())
        task.add_done_callback(_quiet)  # a failure is said by whoever asks next

    @property
    def running(self) -> bool:
        return self._running is not None and not self._running.done()

    async def replayed(
        self, progress: Progress | None = None, early: Early | None = None
    ) -> list[SessionTurns]:
        """The sessions replayed: the last answer while it holds, else the replay running
        (joined) or a new one. Raises what the replay raised (``StoreError``...)."""
        if progress is not None:
            self._progress.append(progress)
        if early is not None:
            self._early.append(early)
        try:
            if self.sessions is not None and not self.stale and not self.running:
                return self.sessions
            if not self.running:
                self._early_found = None
                self._running = asyncio.ensure_future(self._run())
            elif early is not None and self._early_found is not None:
                early(self._early_found)  # joined late: the answers it began with
            assert self._running is not None
            return await asyncio.shield(self._running)
        finally:
            if progress is not None and progress in self._progress:
                self._progress.remove(progress)
            if early is not None and early in self._early:
                self._early.remove(early)

    async def _run(self) -> list[SessionTurns]:
        from ..recallcache import SessionIndexCache
        from ..turnlog import InjectionLog, load_turns_aside

        state = self.state
        self.stale = False
        cache = SessionIndexCache() if state.remembered is not None else None
        held = state.store.identity if state.store is not None else None
        found = await load_turns_aside(state.db_path, state.clock, state.sessions, cache,
                                       self._told, self._told_early, held)  # fmt: skip
        self.sessions = found
        state.replayed(InjectionLog(found))
        return found

    def _told(self, done: int, total: int) -> None:
        for listener in list(self._progress):
            listener(done, total)

    def _told_early(self, found: list[SessionTurns]) -> None:
        self._early_found = found
        for listener in list(self._early):
            listener(found)
