"""The dashboard's shared state: one typed object every view reads. No Textual here.

It holds the open store, the loaded rows, the memory list's settings (filter
and sort), the recall index and what the live poller has seen. It changes only
on the UI thread, through the methods below, and tells its subscribers what
changed with one of the ``Change`` values; each view turns that into a
message to itself (``messages.StateChanged``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store import (
    Clock,
    CorruptRow,
    Event,
    Memory,
    MemoryLoad,
    MemoryStore,
    NotInLog,
    Source,
    StoreError,
    fp,
    iso,
    retimed,
    sessions_root,
    system_clock,
)

from .appstate import AppState
from .compat import loop_has_ready
from .scope import AUTO, Scope, start_scope

if TYPE_CHECKING:  # the past, the Timeline and recall are imported when first used
    from store import Diff, Past, PastLog, Provenance, Purpose, Recall, RecallIndex, Standing

    from .turnlog import InjectionLog

Row = Memory | CorruptRow
EventRow = Event | CorruptRow
FirstPage = Callable[[MemoryLoad[Memory], int], Awaitable[None]]

FIRST_PAGE_THRESHOLD = 5_000
"""Above this many rows, a first screenful is shown before the rest is parsed."""
FIRST_PAGE = 400

FirstRead = tuple[MemoryLoad[Memory] | None, int]
"""A big store's first screenful (None for a small store) and its row count."""


@dataclass(frozen=True, slots=True)
class Reloaded:
    """Every row was replaced by a read of the store (``partial``: a first screenful)."""

    partial: bool
    total: int
    corrupt: int


@dataclass(frozen=True, slots=True)
class OwnWrite:
    """A write of ours committed; these are the records it changed, as stored now."""

    rows: tuple[Row, ...]
    bulk: str = ""
    """A bulk action's operation ("" one record's write)."""
    stopped: bool = False
    """The bulk action stopped before its end (the store could not be written)."""


@dataclass(frozen=True, slots=True)
class LiveChanged:
    """Another connection committed: the events it added and the records it changed
    (``added``: the ids of those that are new to the dashboard)."""

    events: tuple[EventRow, ...]
    rows: tuple[Row, ...]
    added: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Failed:
    """The store could not be opened or read (``message``: what happened and what to do;
    ``cause``: a few words for the status line), or answered again (both empty)."""

    message: str
    cause: str


@dataclass(frozen=True, slots=True)
class Warned:
    """Something worked, at a cost the user should know (a cache not trusted, say)."""

    message: str


@dataclass(frozen=True, slots=True)
class LiveToggled:
    live: bool


@dataclass(frozen=True, slots=True)
class Dialed:
    """The time dial moved: every record's quality is now as of ``as_of`` (None: now)."""

    as_of: float | None


@dataclass(frozen=True, slots=True)
class Regrouped:
    """The app's journal of bulk actions changed (a batch cut short was reconciled)."""


@dataclass(frozen=True, slots=True)
class Scoped:
    """The project scope changed (``DashboardState.scope``): every view shows it."""

    scope: Scope


@dataclass(frozen=True, slots=True)
class Replayed:
    """pi's sessions were replayed: each record's recall log is known (``injections``)."""


Change = (
    Reloaded | OwnWrite | LiveChanged | Failed | LiveToggled | Dialed | Regrouped | Warned
    | Replayed | Scoped
)  # fmt: skip


def at(rows: Sequence[Row], when_ms: float) -> list[Row]:
    """The rows with their quality (freshness, aging, dormancy) as of ``when_ms``."""
    return [retimed(r, when_ms) if isinstance(r, Memory) else r for r in rows]


Listener = Callable[[Change], None]


async def idle() -> None:
    """Return once the event loop has nothing else ready to run (at most 50 turns).

    A load parses a few milliseconds at a time and awaits this in between: a key's
    handling takes several turns of the loop (the key, its binding, the messages it
    posts, the redraw), and each would otherwise wait behind another slice.
    """
    loop = asyncio.get_running_loop()
    for _ in range(50):
        await asyncio.sleep(0)
        if not loop_has_ready(loop):
            return


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
        self.sessions = sessions_root()
        """Where pi keeps its session files (``--sessions DIR``): read only."""
        self.injections: InjectionLog | None = None
        self.scope = Scope()
        """The project every view shows (``scope.py``): set once every record is read."""
        self.scope_asked: str | None = AUTO
        """``--project``'s path, ``--all-projects``'s "", or AUTO: the started-in project."""
        """Each record's recall log, once the Turns view replayed pi's sessions."""
        self.remembered = AppState(db_path) if remember else None
        """The app's own state directory for this store (None: keep nothing, the demo)."""
        self.read_only_requested = read_only
        self.clock = clock
        self.new_id = new_id
        self.store: MemoryStore | None = None
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
        self._past_log: PastLog | None = None
        self._listeners: list[Listener] = []
        self._positions: dict[str, int] | None = None  # row id -> index in rows, on demand
        self._full_loads = 0
        self._changed: dict[str, Row] = {}  # rows changed in place since the index was built
        self._index: tuple[RecallIndex, int] | None = None
        self._opening = asyncio.Lock()  # one open at a time: two would leak a connection
        self._first: asyncio.Task[FirstRead] | None = None  # see prefetch()
        self._read_begun = False  # a prefetch after the first read has nothing to do

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
    def read_only(self) -> bool:
        return self.store is not None and self.store.read_only

    @property
    def read_only_reason(self) -> str:
        return self.store.read_only_reason if self.store is not None else ""

    async def open(self) -> MemoryStore:
        """The open store, opening it on first use (raises ``StoreError``)."""
        async with self._opening:
            if self.store is None:
                self.store = await MemoryStore.open(
                    self.db_path,
                    read_only=self.read_only_requested,
                    clock=self.clock,
                    new_id=self.new_id,
                )
            return self.store

    async def prefetch(self) -> None:
        """Open the store and read its first screenful while the dashboard is still being
        built; the first ``read`` takes that over. Its failure is ``read``'s to report."""
        if self._read_begun:
            return
        if self._first is None:
            self._first = asyncio.ensure_future(self._first_read())
        with contextlib.suppress(StoreError):
            await asyncio.shield(self._first)

    async def _first_read(self) -> FirstRead:
        store = await self.open()
        total = await store.memory_count()
        if total <= FIRST_PAGE_THRESHOLD:
            return None, total
        return await store.recent_memories(FIRST_PAGE), total

    async def read(self, first_page: FirstPage) -> tuple[MemoryLoad[Memory], int]:
        """Read every row; returns them and the newest event's rowid (raises ``StoreError``).

        A big store hands a first screenful (and the total) to ``first_page``, which
        returns once it is on screen, before the rest is parsed.
        """
        self._read_begun = True
        task, self._first = self._first, None
        if task is None and self.store is not None and self.store.file_problem() is not None:
            await self.close()  # replaced or deleted on disk: open what is there now
        page, total = await (task if task is not None else self._first_read())
        store = await self.open()
        if page is not None:
            await first_page(page, total)
        last_rowid = await store.last_event_rowid()
        self.saw_done_sources(await store.done_sources(), await store.done_source_rowids())
        await store.changed()  # the change signal's baseline is this read
        # Each parsed slice is moved out of the cycle collector's sight at once, as the
        # whole load is once it ends: the collections that run between slices would
        # otherwise scan every record parsed so far (0.3 s of a 100,000-record load).
        load = await store.load_memories(yield_every=2_000, after_slice=gc.freeze, between=idle)
        return load, last_rowid

    async def close(self) -> None:
        task, self._first = self._first, None
        if task is not None:  # let a prefetch end first, or it opens the store again
            await asyncio.gather(task, return_exceptions=True)
        store, self.store = self.store, None
        if store is not None:
            await store.close()

    async def provenance(
        self, memory_id: str, turns: int = 3
    ) -> tuple[Provenance, list[dict[str, Any]]]:
        """Where the record came from (``store.provenance``), and each source's place in
        pi's session files with ``turns`` turns on each side (read in a thread, never
        written). Raises ``StoreError``."""
        from store import session_context

        from .recallcache import SessionIndexCache

        store = await self.open()
        p = await store.provenance(memory_id)
        root = self.sessions
        cache = SessionIndexCache() if self.remembered is not None else None

        def contexts() -> list[dict[str, Any]]:
            return [
                session_context(
                    link.source_id,
                    link.source.scope if isinstance(link.source, Source) else "",
                    root,
                    turns,
                    cache,
                )
                for link in p.sources
            ]

        return p, await asyncio.to_thread(contexts)

    def injection_counts(self) -> dict[str, int] | None:
        """How many replayed turns injected each record (None: not replayed yet)."""
        return None if self.injections is None else self.injections.counts()

    def injection_last(self) -> dict[str, float] | None:
        """When a replayed turn last injected each record (None: not replayed yet)."""
        return None if self.injections is None else self.injections.last_moments()

    def injected_line(self, memory_id: str) -> str | None:
        """The record's recall log in a line (None: pi's sessions are not replayed yet)."""
        return None if self.injections is None else self.injections.line(memory_id)

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
        log, walked, top = await self._log()
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

    async def _log(self) -> tuple[PastLog, list[Row], int]:
        """The event log's replay (one for the dial and the Timeline, so that what one
        walked the other reuses), the present rows it walks back from, and the newest
        event they reflect.

        The rows must reflect exactly the events up to that one. Ours already hold a
        write of our own whose event the live poller has not read yet (it reads none
        while paused), and may lack what pi wrote since: so the records the events
        after ``last_rowid`` name are read as they are now, for the walk only. The
        rows shown do not change."""
        from store import PastLog

        store = await self.open()
        if self._past_log is None or self._past_log.store is not store:
            self._past_log = PastLog(store)
        present = self._present if self._present is not None else self.rows
        top = await store.last_event_rowid()
        if top > self.last_rowid:
            named = dict.fromkeys(
                i
                for e in await store.events(limit=None, after_rowid=self.last_rowid)
                if isinstance(e, Event)
                for i in e.record_ids
            )
            fresh: dict[str, Row] = {r.id: r for r in await store.memories(list(named))}
            present = [fresh.pop(r.id, r) for r in present]
            present.extend(fresh.values())
        return self._past_log, present, max(top, self.last_rowid)

    async def standing(
        self, moments: Sequence[float], each: Callable[[Standing], None] | None = None
    ) -> list[Standing]:
        """How many records of the project scope were in each state at each of
        ``moments`` (the Timeline), replayed from the event log like the dial's past.
        Raises ``StoreError``."""
        from store import timeline

        log, present, top = await self._log()
        return await timeline.standing(log, present, top, moments, each, self.scope.project)

    async def diff(
        self, start: float, end: float | None = None, *, start_rowid: int | None = None
    ) -> Diff:
        """The records added, changed and removed between ``start`` and ``end`` (None:
        now), replayed from the event log like the dial's past; ``start_rowid``: start
        just after that event (a last visit: the events it had seen). Raises
        ``NotInLog`` for a moment older than the log gives exactly (and ``StoreError``)."""
        from store import diff

        log, present, top = await self._log()
        ends = []
        for when, boundary in ((start, start_rowid), (self.clock() if end is None else end, None)):
            past = await log.at(when, present, top, boundary=boundary)
            if past.clamped:
                raise NotInLog(past.refusal())
            ends.append(past)
        return diff(ends[0], ends[1])

    def _show(self, rows: list[Row]) -> None:
        """Show other records wholesale (the dial crossing into or out of the past)."""
        self.rows = rows
        self._positions = None
        self._full_loads += 1  # the recall index is rebuilt for them
        self._changed.clear()

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
        self._changed.update((r.id, r) for r in self.rows if isinstance(r, Memory))
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
        self._full_loads += 1
        self._changed.clear()

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
        self._tell(Reloaded(partial, total, self.corrupt))
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
        self._changed.update((r.id, r) for r in rows)
        self.total = len(self.rows)
        return rows

    def written(self, rows: Sequence[Row], *, bulk: str = "", stopped: bool = False) -> None:
        """A write of ours committed: put the changed records in place."""
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

    def set_scope(self, scope: Scope) -> None:
        """Show ``scope`` (a project, or every project) in every view."""
        self.scope = scope
        self._tell(Scoped(scope))

    def replayed(self, log: InjectionLog) -> None:
        """The Turns view's replay ended: every view may now read each recall log."""
        self.injections = log
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
        """The recall index of the loaded records, kept current off the UI thread.

        Rows changed in place since the last build are applied to it (cheap);
        after a wholesale reload, or when a row turned corrupt, it is rebuilt.
        None until every row is loaded.
        """
        if not self.loaded:
            return None
        pending = dict(self._changed)
        state = self._index
        full_loads = self._full_loads
        if state is not None and state[1] == full_loads and not pending:
            return state[0]
        if (
            state is None
            or state[1] != full_loads
            or any(isinstance(r, CorruptRow) for r in pending.values())
        ):
            from .recallcache import indexed  # numpy: imported at the first recall

            memories = [r for r in self.rows if isinstance(r, Memory)]
            cached = self.db_path if self.remembered is not None else None
            warned: list[str] = []
            index = await asyncio.to_thread(
                indexed, cached, memories, save=self.past is None, warn=warned.append
            )
            for line in warned:
                self._tell(Warned(line))
        else:
            rows = [r for r in pending.values() if isinstance(r, Memory)]
            index = await asyncio.to_thread(state[0].updated, rows)
        for memory_id, row in pending.items():
            if self._changed.get(memory_id) is row:
                del self._changed[memory_id]
        # Not frozen (gc.freeze): the index is a few dozen containers, and freezing here
        # made every cycle not yet collected at that moment permanent.
        self._index = (index, full_loads)
        return index

    async def recall(self, prompt: str, purpose: Purpose, turns: Sequence[str] = ()) -> Recall:
        """The recall pipeline over the loaded records (raises ``StoreError``)."""
        index = await self.recall_index()
        if index is None:  # still loading: ask the store directly
            store = await self.open()
            return await store.recall(prompt, purpose=purpose, recent_user_turns=turns)
        return await asyncio.to_thread(
            index.recall, prompt, purpose=purpose, recent_user_turns=turns
        )
