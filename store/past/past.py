"""The store as it was at a moment in the past, replayed from the event log.

Nearly every change pi makes to a record is an event carrying the record's full
``before`` and ``after`` (§2.5, §4.1). So the records as they were at a moment T are
the current rows with every event newer than T undone, newest first: each record it
names goes back to its ``before``, or away where ``before`` is null.

What the log cannot give
    pi's confirmation stamp (§5.6) moves ``reinforcedAt`` with no event, and the
    issue that asked for this names ``evidence`` and ``sourceEntryId`` as moving the
    same way. These fields (``UNLOGGED_JSON``) are therefore left out when an event is
    checked against the reconstruction. ``evidence`` and ``sourceEntryId`` are as the
    reconstruction gives them (the current row's, or the ``before`` of the record's
    oldest change after T). ``reinforcedAt`` is the stamp the record's newest event at
    or before T wrote: stamps only move forward and every write carries the stamp
    along, so that one is known to have been there; a later one, even one dated
    before T, may have been given after T. A reader shows all three as not in the
    event log.

Never guess
    Each event undone must follow from the reconstruction: its ``after`` must be, field
    for field (``UNLOGGED_JSON`` aside), the record as reconstructed so far. An event that is
    not readable (§2.5's checks) or that does not follow stops the walk there. The
    records are then exact back to that event's moment only, and a moment older than
    that is refused by the caller (``Past.clamped``), never shown as if known.

Events newer than T
    The walk undoes events in rowid order (pi's insertion order), newest first. The log
    only grows, so an event was written no earlier than any event before it: an event
    dated earlier than one written before it (a clock set back, or two processes whose
    clocks disagree) is taken at the newest moment before it (``_moments`` is the
    running maximum). The walk stops at the first event whose moment so taken is at or
    before T: the state after the last event written at or before T. An event whose
    ``at`` is unreadable is taken at the next readable moment after it (never earlier
    than the one before), so a walk to any moment before that reaches it and stops.

Records the log never names
    A record no event wrote (raw SQL, a damaged log) is taken to exist from its
    ``createdAt``: at an older moment it is left out, never shown as always there.

Unknown moments
    When the log is broken and no readable moment is newer than the break, the store is
    exact only as it is now: ``exact_back_to`` is then +inf, never the clock's now (which
    a reader may have moved to the moment asked for).

Speed
    The moments of all events are read once (one statement, ``json_extract`` in
    SQLite). Walks reach back from now, and each change they undo is kept as columns
    (``intervals.Changes``: each version of a record, valid from one event to the
    next): a moment the walks already reached is a sorted search over them, each
    record's oldest change after the moment giving what it was, with no event undone
    again (see ``PastLog``).

Kept between processes
    A walk that reached the start of the log (or the event that does not follow) is
    kept, without its typed records, where ``PastLog.keep`` says (``pastkeep``). The
    next process adopts it only if the records as of its newest event (the rows now,
    with any events since undone and checked as usual) have the fingerprint kept;
    every event whose ``before`` it then builds must have the checksum kept. This
    rests on the log being append-only (§7, invariant 19): an event rewritten by hand
    is found where the walk reads it, and then the whole log is walked afresh.
"""

from __future__ import annotations

import asyncio
import bisect
import gc
import math
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from ..errors import NotInLog
from ..js import iso
from ..records.model import Memory, retimer
from .events import (
    READ_CHUNK,
    LogEvents,
    Row,
    _Stale,
)
from .intervals import NONE, Changes
from .pastkeep import checksum, decode
from .undo import _created_after, _undo

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Past:
    """The records as of a moment, replayed from the event log."""

    when: float
    """The moment asked for (epoch ms)."""
    rows: tuple[Row, ...]
    """The records that existed then, in the current rows' order, quality as of
    ``when``. A corrupt row is kept as it is now: what it was cannot be read."""
    exact_back_to: float | None
    """The oldest moment the log gives exactly, or None when it is readable to its start."""
    stopped: str
    """Why the walk stops at ``exact_back_to`` ("" when it does not)."""
    boundary: int
    """The rowid of the newest event at or before ``when`` (0: before every event)."""
    undone: int
    """How many events were undone to get here (0: the walks had reached the moment
    already)."""

    @property
    def clamped(self) -> bool:
        """``when`` is older than the log can give: the rows are only exact as of
        ``exact_back_to``, and a reader must refuse ``when`` rather than show them."""
        return self.exact_back_to is not None and self.when < self.exact_back_to

    def limit_line(self) -> str:
        """ "exact back to …; older changes unreadable", or ""."""
        if self.exact_back_to is None:
            return ""
        if math.isinf(self.exact_back_to):
            return f"exact only as it is now; older changes unreadable ({self.stopped})"
        return f"exact back to {iso(self.exact_back_to)}; older changes unreadable ({self.stopped})"

    def refusal(self) -> str:
        """The one line a reader refuses ``when`` with (``clamped``)."""
        return (
            f"the store as of {iso(self.when)} is not known: the event log is {self.limit_line()}"
        )


@dataclass(slots=True)
class PastLog(LogEvents):
    """The event log's moments, with what earlier walks undid, for one store.

    ``at`` is the one path to the past: the time dial and every reading verb's
    ``--as-of`` call it. Walks reach back from now, and the oldest point reached (the
    frontier) moves only back. Every change a walk undoes is kept as columns
    (``intervals.Changes``): a moment at or after the frontier is then a selection, each
    record's oldest change after the moment giving what it was (its ``before``), with no
    event undone again; a moment before the frontier extends it. Its fields, and its
    reads of the log, are ``LogEvents``'s (``events.py``).
    """

    async def at(
        self,
        when: float,
        now: Sequence[Row],
        upto: int,
        *,
        boundary: int | None = None,
        retime: bool = True,
    ) -> Past:
        """The records as of ``when`` (epoch ms), from ``now`` (the current rows, which
        reflect every event up to rowid ``upto``). ``boundary``: the records as they were
        just after that event instead (a reader that knows which events it saw, as a
        last visit does), their quality still taken at ``when``. ``retime`` False: the
        records keep the moment they carry (a reader that takes their quality at
        ``when`` itself, as the turns replay's moving index does, skips a copy of each)."""
        async with self._lock:
            return await self._unless_stale(lambda: self._at(when, now, upto, boundary, retime))

    async def pair(
        self,
        start: tuple[float, int | None],
        end: float,
        now: Sequence[Row],
        upto: int,
    ) -> tuple[Past, Past]:
        """The records at ``start`` (a moment, and optionally the event just after which
        it starts) and at ``end``, as ``at`` gives them, but only those that can differ
        between the two: the records an event after the start changed, and those created
        after it (a record no event names). What ``diff`` needs, without building every
        other record twice (at 100,000 records, a last visit's diff with a few events
        since builds a few records, not 200,000)."""
        async with self._lock:
            return await self._unless_stale(lambda: self._pair(start, end, now, upto))

    async def _unless_stale(self, read: Callable[[], Awaitable[_T]]) -> _T:
        """``read()``; when the kept walk proves not to be the log's, ``read()`` again
        on a walk made afresh (which then replaces it)."""
        try:
            return await read()
        except _Stale:
            self._distrust, self._now = True, None
            return await read()

    async def _pair(
        self, start: tuple[float, int | None], end: float, now: Sequence[Row], upto: int
    ) -> tuple[Past, Past]:
        started, undone_start = await self._reach(start[0], now, upto, start[1])
        ended, undone_end = await self._reach(end, now, upto, None)
        assert self._changes is not None
        after = max(min(started, ended), self._frontier_at)
        since = self._changes.changed_after(bisect.bisect_right(self._rowids, after) - 1)
        moment = min(start[0], end)  # the older of the two
        broken = self._broken
        if broken is not None and math.isfinite(broken.exact_back_to):
            moment = max(moment, broken.exact_back_to)
        if math.isfinite(moment):
            moment_iso = iso(moment)
            since |= {
                r.id
                for r in now
                if isinstance(r, Memory) and _created_after(r.created_at, moment_iso, moment)
            }
        first = await self._at(start[0], now, upto, start[1], True, since)
        last = await self._at(end, now, upto, None, True, since)
        return replace(first, undone=undone_start), replace(last, undone=undone_end)

    async def _at(
        self,
        when: float,
        now: Sequence[Row],
        upto: int,
        boundary: int | None,
        retime: bool,
        only: Collection[str] | None = None,
    ) -> Past:
        boundary, undone = await self._reach(when, now, upto, boundary)
        broken = self._broken
        # Below a break, the records are as at the break (and the reader refuses them).
        first = self._first_after(now, max(boundary, self._frontier_at))
        shown = when
        if broken is not None and math.isfinite(broken.exact_back_to):
            shown = max(when, broken.exact_back_to)
        # Building 100,000 records makes only acyclic objects: pausing the cycle
        # collector spares it rescanning every record held, several times over.
        collecting = gc.isenabled()
        gc.disable()
        if only is not None:  # the records asked for alone
            asked = [(r, c) for r, c in zip(now, first, strict=True) if r.id in only]
            now, first = [r for r, _ in asked], [c for _, c in asked]
        try:
            rows = await self._rows(now, first, boundary, shown, retime)
        finally:
            if collecting:
                gc.enable()
        return Past(
            when=when,
            rows=tuple(rows),
            exact_back_to=None if broken is None else broken.exact_back_to,
            stopped="" if broken is None else broken.why,
            boundary=boundary,
            undone=undone,
        )

    async def _reach(
        self, when: float, now: Sequence[Row], upto: int, boundary: int | None
    ) -> tuple[int, int]:
        """Walk back as far as ``when`` needs (or ``boundary``: just after that event),
        keeping the walk once it reaches the start of the log or a break: the boundary,
        and how many events were undone to reach it."""
        undone = 0
        if self._now is None or self._top != upto:
            undone = await self._start(now, upto)
        boundary = self._boundary(when) if boundary is None else min(boundary, upto)
        if boundary < self._frontier_at and self._broken is None:
            undone += await self._walk(boundary)
            if self.after_walk is not None:
                self.after_walk(undone)
        if not self._kept and (self._complete or self._broken is not None):
            await self._save()
        return boundary, undone

    async def _start(self, now: Sequence[Row], upto: int) -> int:
        """Begin again from ``now``, as of event ``upto``: from the kept walk where it
        is still the store's (the events since undone and checked first), else from
        nothing. How many events were undone."""
        self._now = {r.id: r for r in now}
        self._frontier, self._broken, self._indexed = {}, None, None
        self._stamps = self._logged = None
        self._kept = False
        # A kept walk covers at least ``_least`` events, so a newest rowid below that
        # has none: the keep is not even read.
        keep = self.keep if upto >= self._least and not self._distrust else None
        kept = None if keep is None else decode(await asyncio.to_thread(keep.load))
        if kept is not None and not (0 <= kept.top <= upto):
            kept = None
        await self._read_moments(upto, kept)
        self._changes = Changes(len(self._rowids))
        self._frontier_at = upto
        if kept is None:
            return 0
        undone = await self._walk(kept.top) if kept.top < upto else 0
        if self._broken is None:  # else the log is exact only down to a newer event
            if not self._adopt(kept):
                raise _Stale
            self._kept = kept.top == upto
        return undone

    async def _rows(
        self,
        now: Sequence[Row],
        first: Sequence[int],
        boundary: int,
        shown: float,
        retime: bool = True,
    ) -> list[Row]:
        """The records at ``boundary``, in the current rows' order, quality at ``shown``
        (``first``: each row's oldest change after it). A record as it is now that was
        created after ``shown`` and that no event names did not exist yet (one an event
        names was created by an event the boundary includes, and is kept)."""
        changes = self._changes
        assert changes is not None
        versions, gone = changes.versions, changes.gone_at
        missing: list[int] = []
        if changes.unbuilt:  # some changes a kept walk found have no record yet
            missing = [c for c in first if c != NONE and versions[c] is None and not gone[c]]
        if missing:
            await self._build(missing)
            if self.after_walk is not None:  # the records built are kept as the walk's
                self.after_walk(len(missing))
        rows: list[Row] = []
        append = rows.append
        stamps = self._stamps  # read when a confirmed record first needs them
        shown_iso = iso(shown) if math.isfinite(shown) else ""
        logged: set[str] | None = None  # read when a row created after the moment asks
        retimers: dict[type, Callable[[Any, float], Any]] = {}  # one lookup per class
        for row, change in zip(now, first, strict=True):
            if not isinstance(row, Memory):
                append(row)  # corrupt now: what it was cannot be read
                continue
            if change == NONE:
                was: Memory | None = row
                if shown_iso and _created_after(row.created_at, shown_iso, shown):
                    if logged is None:
                        logged = await self._read_logged()
                    if row.id not in logged:
                        continue
            elif gone[change]:
                continue
            else:
                was = versions[change]
            assert was is not None
            if was.reinforced_at is not None:
                if stamps is None:
                    stamps = await self._read_stamps()
                was = self._stamped_then(stamps, was, boundary)
            if retime:
                cls = type(was)
                fn = retimers.get(cls)
                if fn is None:
                    fn = retimers[cls] = retimer(cls)
                was = fn(was, shown)
            append(was)
        return rows

    async def _walk(self, boundary: int) -> int:
        """Walk the frontier back to ``boundary``, undoing the events newest first into
        ``_frontier`` and keeping each change; stop at the first event that does not
        follow (the log is then exact down to it only)."""
        assert self._now is not None and self._changes is not None
        changes, overlay, rowids = self._changes, self._frontier, self._rowids
        chunk = max(1, min(READ_CHUNK, self.checkpoint_every))
        undone = 0
        high = self._frontier_at
        while high > boundary:
            rows = await self.store.query(
                "SELECT rowid, id, scope, data FROM events WHERE rowid > ? AND rowid <= ? "
                "ORDER BY rowid DESC LIMIT ?",
                (boundary, high, chunk),
            )
            if not rows:
                break
            collecting = gc.isenabled()
            gc.disable()  # records only, no cycles: see at()
            try:
                for rowid, event_id, scope, raw in rows:
                    event = bisect.bisect_left(rowids, rowid)
                    if event == len(rowids) or rowids[event] != rowid:
                        raise NotInLog("the event log changed while it was read")
                    changed = _undo(event_id, scope, raw, overlay, self._now, self.typed)
                    if isinstance(changed, str):
                        self._frontier_at = int(rowid)
                        self._break(int(rowid), event_id, changed)
                        return undone
                    undone += 1
                    self._sums[event] = checksum(raw)
                    for record_id, slot, was, stamp in changed:
                        changes.add(event, record_id, slot, was, stamp)
                    self._frontier_at = int(rowid) - 1
            finally:
                if collecting:
                    gc.enable()
            high = int(rows[-1][0]) - 1
        self._frontier_at = boundary
        return undone
