"""The dashboard's shared state: one typed object every view reads. No Textual here.

It holds the open store, the loaded rows, the project scope, the time dial and what
the live poller has seen; its parts hold the rest: ``changes`` (what it tells),
``recalling`` (the recall index and log), ``past`` (the walks into the past) and
``sources`` (a record's provenance with pi's sessions around it). It changes only
on the UI thread, through the methods below, and tells its subscribers what
changed with one of the ``Change`` values; each view turns that into a
message to itself (``messages.StateChanged``).
"""

from __future__ import annotations

import asyncio
import gc
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store import (
    Clock,
    Event,
    Memory,
    MemoryLoad,
    MemoryStore,
    fp,
    iso,
    sessions_folder,
    system_clock,
)

from ..appstate import AppState
from ..scope import AUTO, Scope, start_scope
from .changes import (
    Change,
    Dialed,
    EventRow,
    Failed,
    Listener,
    LiveChanged,
    LiveToggled,
    OwnWrite,
    Regrouped,
    Reloaded,
    Replayed,
    Row,
    Scoped,
    Warned,
    at,
)
from .past import PastWalks
from .reading import FirstPage, StoreReader, idle
from .recalling import RecallKeeper
from .replay import SessionReplay

if TYPE_CHECKING:  # the past, the Timeline and recall are imported when first used
    from store import Diff, Past, Provenance, Purpose, Recall, RecallIndex, Standing

    from ..turnlog import InjectionLog

__all__ = [  # the state's face: what the views import from it
    "Change", "DashboardState", "Dialed", "EventRow", "Failed", "LiveChanged", "LiveToggled",
    "OwnWrite", "Regrouped", "Reloaded", "Replayed", "Row", "Scoped", "Warned", "at", "idle",
]  # fmt: skip


class DashboardState:
    """What the views share, and the only place it changes."""

    def __init__(
        self,
        db_path: Path,
        *,
        read_only: bool = False,
        clock: Clock = system_clock,
        new_id: Callable[[], str] | None = None,
        remember: bool = True,
    ) -> None:
        self.db_path = db_path
        self.sessions, self.sessions_why = sessions_folder()
        """Where pi keeps its session files, and why (``use_sessions``): read only."""
        self.scope = Scope()
        """The project every view shows (``scope.py``): set once every record is read."""
        self.scope_asked: str | None = AUTO
        """``--project``'s path, ``--all-projects``'s "", or AUTO: the started-in project."""
        self.remembered = AppState(db_path) if remember else None
        """The app's own state directory for this store (None: keep nothing, the demo)."""
        self.clock = clock
        self.reader = StoreReader(
            db_path, read_only=read_only, clock=clock, new_id=new_id, keep_past=remember
        )
        """The store's connection and the reads of every row."""
        self.rows: list[Row] = []
        """Every loaded row: corrupt ones first, then the records in store order."""
        self.total = 0
        self.partial = False
        self.loaded = False
        """True once every row has been read (not only a first screenful)."""
        self.corrupt = 0
        self.failure: str | None = None
        """What failed last, until the store answers again."""
        self.problem = ""
        """That failure in a few words, for the status line."""
        self.live = True
        self.last_rowid = 0
        """The newest event this dashboard has seen."""
        self.done_sources = (0, 0)
        self.done_source_rowids: frozenset[int] = frozenset()
        """The sources done when the rows were read (their count and rowid sum, and
        their rowids): one that finishes later may have stamped records (§5.6), and
        the live poller looks for those stamps."""
        self.last_change: float | None = None
        """When the poller last saw another connection commit."""
        self.as_of: float | None = None
        """The time dial: the moment the records are shown as of (None: now)."""
        self.past: Past | None = None
        """The dial is at a past moment: the records as they were, replayed from the
        event log (``rows`` are then these, and the present waits in ``_present``)."""
        self._present: list[Row] | None = None
        self._walks = PastWalks()
        self._listeners: list[Listener] = []
        self._positions: dict[str, int] | None = None  # row id -> index in rows, on demand
        self.recalling = RecallKeeper()
        self.replay = SessionReplay(self)  # pi's sessions replayed once, for every view
        """The recall index of the rows, and each record's recall log."""

    # ------------------------------------------------------------ subscribing

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every change; returns the function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _tell(self, change: Change) -> None:
        for listener in list(self._listeners):
            listener(change)

    # ------------------------------------------------------------ the store

    @property
    def store(self) -> MemoryStore | None:
        """The open store (None before the first open, and after ``close``)."""
        return self.reader.store

    @property
    def read_only(self) -> bool:
        return self.store is not None and self.store.read_only

    @property
    def read_only_reason(self) -> str:
        return self.store.read_only_reason if self.store is not None else ""

    async def open(self) -> MemoryStore:
        """The open store, opening it on first use (raises ``StoreError``)."""
        return await self.reader.open()

    async def prefetch(self) -> None:
        await self.reader.prefetch()

    async def read(self, first_page: FirstPage) -> tuple[MemoryLoad[Memory], int]:
        """Read every row (``StoreReader.read``); returns them and the newest event's rowid."""
        return await self.reader.read(first_page, self.saw_done_sources)

    async def close(self) -> None:
        await self.reader.close()

    @property
    def injections(self) -> InjectionLog | None:
        """Each record's recall log, once pi's sessions were replayed (``replay``)."""
        return self.recalling.injections

    async def provenance(
        self, memory_id: str, turns: int = 3
    ) -> tuple[Provenance, list[dict[str, Any]]]:
        """Where the record came from, and each source's place in pi's session files
        with ``turns`` turns on each side (``sources.provenance``)."""
        from .sources import provenance

        store = await self.open()
        cached = self.remembered is not None
        return await provenance(store, memory_id, self.sessions, turns, cached=cached)

    def injection_counts(self) -> dict[str, int] | None:
        return self.recalling.counts()

    def injection_last(self) -> dict[str, float] | None:
        return self.recalling.last()

    def injected_line(self, memory_id: str) -> str | None:
        return self.recalling.line(memory_id)

    async def record_events(self, memory_id: str) -> Sequence[EventRow]:
        """One record's own events, newest first (for a detail pane)."""
        store = self.store
        if store is None:
            return []
        return await store.events(memory_id=memory_id, limit=50)

    def _index_of(self, memory_id: str) -> int | None:
        positions = self._positions
        if positions is None:
            positions = self._positions = {r.id: i for i, r in enumerate(self.rows)}
        return positions.get(memory_id)

    def find(self, memory_id: str) -> Row | None:
        i = self._index_of(memory_id)
        return None if i is None else self.rows[i]

    def duplicates(self, record: Memory) -> list[Memory]:
        """The other active records of its origin with the same text: marking one
        incorrect quarantines them all (§4.3)."""
        content = fp(record.content)
        return [
            r
            for r in self.rows
            if isinstance(r, Memory)
            and r.id != record.id
            and r.scope == record.scope
            and r.active
            and fp(r.content) == content
        ]

    # ------------------------------------------------------------ changes

    def now(self) -> float:
        """The moment the dashboard shows: the time dial's, or the clock's."""
        return self.clock() if self.as_of is None else self.as_of

    def _dialed(self, rows: Sequence[Row]) -> list[Row]:
        return list(rows) if self.as_of is None else at(rows, self.as_of)

    async def dial_past(self, when_ms: float) -> Past:
        """Show the records as they were at ``when_ms`` (before now), replayed from the
        event log by the same path as ``--as-of`` (``store.past.PastLog``).

        Where the log is exact only back to a later moment (an event there cannot be
        undone), the dial goes to that moment instead: the returned ``Past`` says so
        (``clamped``), and nothing older is guessed. Raises ``StoreError``.
        """
        store = await self.open()
        log, walked, top = await self._walks.walk(store, self._present_rows(), self.last_rowid)
        asked = await log.at(when_ms, walked, top)
        past = asked
        if asked.clamped and asked.exact_back_to is not None:
            if math.isinf(asked.exact_back_to):  # exact only as it is now: stay there
                return asked
            past = await log.at(asked.exact_back_to, walked, top)
        self._present = self._present if self._present is not None else self.rows
        self.past = asked
        self.as_of = past.when
        self._show(list(past.rows))
        self._tell(Dialed(past.when))
        return asked

    async def standing(
        self, moments: Sequence[float], each: Callable[[Standing], None] | None = None
    ) -> list[Standing]:
        """How many records of the project scope were in each state at each of
        ``moments`` (the Timeline), replayed from the event log like the dial's past.
        Raises ``StoreError``."""
        store, present = await self.open(), self._present_rows()
        project = self.scope.project
        return await self._walks.standing(store, present, self.last_rowid, moments, each, project)

    async def diff(
        self, start: float, end: float | None = None, *, start_rowid: int | None = None
    ) -> Diff:
        """The records added, changed and removed between ``start`` and ``end`` (None:
        now), replayed from the event log like the dial's past; ``start_rowid``: start
        just after that event (a last visit: the events it had seen). Raises
        ``NotInLog`` for a moment older than the log gives exactly (and ``StoreError``)."""
        store, present = await self.open(), self._present_rows()
        until = self.clock() if end is None else end
        return await self._walks.diff(store, present, self.last_rowid, (start, start_rowid), until)

    def _present_rows(self) -> list[Row]:
        """The rows as they are now (while the dial is in the past, those waiting)."""
        return self._present if self._present is not None else self.rows

    def _show(self, rows: list[Row]) -> None:
        """Show other records wholesale (the dial crossing into or out of the past)."""
        self.rows = rows
        self._positions = None
        self.recalling.replaced()  # the recall index is rebuilt for them

    def set_as_of(self, when_ms: float | None) -> None:
        """Show every record as of ``when_ms`` (None: now, or a future moment: the same
        records, decay projected). Nothing is written."""
        if self._present is not None:  # back from the past
            present, self._present, self.past = self._present, None, None
            self._show(present)
        self.as_of = when_ms
        self.rows = at(self.rows, self.now())  # same rows, same order: positions hold
        # Every record's quality changed, none of its words: the recall index rewrites
        # its columns and keeps its postings (no feature is extracted again).
        self.recalling.touched(r for r in self.rows if isinstance(r, Memory))
        self._tell(Dialed(when_ms))

    def write_refusal(self) -> str | None:
        """Why a write key does nothing now, or None when it may write."""
        if self.as_of is not None:
            how = "as it was then" if self.past is not None else "(simulated)"
            return (
                f"The time dial shows {iso(self.as_of)[:10]} {how}, and every write "
                "stamps the real time: nothing was written. Press 0 to return to now"
            )
        if self.read_only:
            return f"Read-only ({self.read_only_reason}): nothing was written"
        problem = self.store.file_problem() if self.store is not None else None
        if problem is not None:
            return f"{problem}: nothing was written"
        return None

    def _replace_all(self, load: MemoryLoad[Memory]) -> None:
        if self._present is not None:  # a full reload ends a look at the past
            self._present, self.past, self.as_of = None, None, None
        self.rows = self._dialed([*load.corrupt, *load.memories])
        self._positions = None
        self.corrupt = len(load.corrupt)
        self.recalling.replaced()

    def replace(
        self, load: MemoryLoad[Memory], *, partial: bool, total: int, last_rowid: int
    ) -> None:
        """A read of every row (or of a first screenful, ``partial``) finished."""
        was_past = self._present is not None
        self._replace_all(load)
        self.total = total
        self.partial = partial
        self.failure, self.problem = None, ""
        if not partial:
            if not self.loaded:  # the scope asked for, or the project started in
                origins = {r.scope for r in self.rows if isinstance(r, Memory)}
                self.scope = start_scope(self.scope_asked, os.getcwd(), origins)
            self.loaded = True
            self.last_rowid = max(self.last_rowid, last_rowid)
            # The loaded records live as long as the view: keep the cycle collector
            # from rescanning them on every full collection (a pause per keypress
            # at 100,000 rows otherwise). They are still freed when replaced.
            gc.freeze()
        self.replay.stale |= not partial and self.replay.sessions is not None  # "now" moved
        self._tell(Reloaded(partial, total, self.corrupt))
        if not partial:
            self.replay.start()  # known to every view before any asks
        if was_past:
            self._tell(Dialed(None))

    def _put(self, rows: Sequence[Row]) -> Sequence[Row]:
        """Put changed rows in place, new ones at the end: work in proportion to the change.

        While the dial is in the past, a change is a change to the present: it waits
        there, and the records shown (as they were) do not move."""
        if self._present is not None:
            where = {r.id: i for i, r in enumerate(self._present)}
            for r in rows:
                i = where.get(r.id)
                if i is None:
                    self._present.append(r)
                else:
                    self._present[i] = r
            return ()
        rows = self._dialed(rows)
        for r in rows:
            i = self._index_of(r.id)
            if i is None:
                assert self._positions is not None
                self._positions[r.id] = len(self.rows)
                self.rows.append(r)
            else:
                self.rows[i] = r
        self.recalling.touched(rows)
        self.total = len(self.rows)
        return rows

    def written(self, rows: Sequence[Row], *, bulk: str = "", stopped: bool = False) -> None:
        """A write of ours committed: put the changed records in place."""
        self.replay.stale = self.replay.sessions is not None  # "now" moved
        self._tell(OwnWrite(tuple(self._put(rows)), bulk, stopped))

    def live_changed(self, events: Sequence[EventRow], rows: Sequence[Row], at: float) -> None:
        """Another connection committed (see ``live.ChangePoller``)."""
        self.last_change = at
        rowids = [e.rowid for e in events if isinstance(e, Event)]
        if rowids:
            self.last_rowid = max(self.last_rowid, *rowids)
        added = frozenset(
            r.id for r in rows if self._present is None and self._index_of(r.id) is None
        )
        self._tell(LiveChanged(tuple(events), tuple(self._put(rows)), added))

    def saw_done_sources(self, signature: tuple[int, int], rowids: frozenset[int]) -> None:
        """The done sources as of a read: the first read, or the live poller's once it
        has read the stamps of those done since (see ``live``)."""
        self.done_sources, self.done_source_rowids = signature, rowids

    def regrouped(self) -> None:
        self._tell(Regrouped())

    def use_sessions(self, asked: str | None) -> None:  # --sessions, else where pi puts them
        self.sessions, self.sessions_why = sessions_folder(asked)

    def set_scope(self, scope: Scope) -> None:
        """Show ``scope`` (a project, or every project) in every view."""
        self.scope = scope
        self._tell(Scoped(scope))

    def replayed(self, log: InjectionLog) -> None:
        """pi's sessions were replayed (``replay``): every view may read each recall log."""
        self.recalling.injections = log
        self._tell(Replayed())

    def fail(self, message: str, cause: str) -> None:
        self.failure, self.problem = message, cause
        self._tell(Failed(message, cause))

    def recovered(self) -> None:
        """The store answered again (a poll after a failed one)."""
        if self.failure is not None:
            self.failure, self.problem = None, ""
            self._tell(Failed("", ""))

    def set_live(self, live: bool) -> None:
        self.live = live
        self._tell(LiveToggled(live))

    # ------------------------------------------------------------ recall

    async def recall_index(self) -> RecallIndex | None:
        """The recall index of the loaded records, kept current off the UI thread
        (``RecallKeeper.index``); None until every row is loaded."""
        if not self.loaded:
            return None

        def warn(line: str) -> None:
            self._tell(Warned(line))

        cached = self.db_path if self.remembered is not None else None
        return await self.recalling.index(self.rows, cached, save=self.past is None, warn=warn)

    async def recall(self, prompt: str, purpose: Purpose, turns: Sequence[str] = ()) -> Recall:
        """The recall pipeline over the loaded records (raises ``StoreError``)."""
        index = await self.recall_index()
        if index is None:  # still loading: ask the store directly
            store = await self.open()
            return await store.recall(prompt, purpose=purpose, recent_user_turns=turns)
        return await asyncio.to_thread(
            index.recall, prompt, purpose=purpose, recent_user_turns=turns
        )
