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
from array import array
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import orjson

from ..base import StoreBase
from ..errors import NotInLog
from ..js import iso, parse_ms
from ..records.decode import befores_fast
from ..records.model import CorruptRow, Memory, Signal, StoredMemory, retimer
from ..records.rows import listed_from_data, loads, signal_of
from ..records.validate import event_problem
from .intervals import NONE, Changes
from .pastkeep import FORMAT, Kept, PastKeep, checksum, decode, encode, fingerprint

Typed = Callable[[dict[str, Any], float], Memory]
"""How a record dict from an event becomes a typed record (listed, or with its stored object)."""

Row = Memory | CorruptRow
_T = TypeVar("_T")

UNLOGGED_JSON = ("sourceEntryId", "evidence", "reinforcedAt")
"""Record fields pi changes without an event, as the stored record names them."""

LOGGED = (
    "kind",
    "content",
    "scope",
    "created_at",
    "updated_at",
    "revision",
    "layer",
    "status",
    "utility",
    "accuracy",
    "search_terms",
    "suppressed_hashes",
)
"""The fields every change is logged with: what an event is checked against, and what a
diff compares."""

CHECKPOINT_EVERY = 2_000
"""Events a walk reads and undoes at a time, between two turns of the event loop."""

KEEP_FROM = 10_000
"""A shorter log is walked again (well under half a second) rather than kept: adopting
a kept walk fingerprints every record, which at 100,000 records takes longer."""

READ_CHUNK = 2_000
"""Events read from SQLite at a time by a walk."""


def _same_signal(signal: Signal | None, feedback: Any, slot: str) -> bool:
    """``signal`` is the verdict in ``slot`` of a stored, unchecked ``feedback``."""
    try:
        return signal_of(feedback, slot) == signal
    except (KeyError, TypeError):  # not a verdict pi could have written
        return False


def follows(record: Memory, data: dict[str, Any]) -> bool:
    """The stored record ``data`` is ``record`` on every field in ``LOGGED``, compared
    without typing ``data`` first (a walk checks every event's ``after`` this way)."""
    g = data.get
    return (
        g("id") == record.id
        and g("content") == record.content
        and g("updatedAt") == record.updated_at
        and g("revision") == record.revision
        and g("status") == record.status
        and g("layer") == record.layer
        and g("kind") == record.kind
        and g("scope") == record.scope
        and g("createdAt") == record.created_at
        and tuple(g("searchTerms") or ()) == record.search_terms
        and tuple(g("suppressedHashes") or ()) == record.suppressed_hashes
        and _same_signal(record.utility, g("feedback"), "utility")
        and _same_signal(record.accuracy, g("feedback"), "accuracy")
    )


def in_written_order(taken: array[float]) -> list[int]:
    """Make ``taken`` nondecreasing, in place, trusting the most events: the longest
    run of events (in the order written) whose dates already agree is kept as it is,
    and each other event is taken at the moment of the kept one before it (or after
    it, when none is before). One event re-dated to 2031 then moves itself, not every
    event written after it; one dated back moves itself, not every event before it.
    Returns the indexes of the events moved (none for an ordered log: one pass)."""
    if all(taken[i] <= taken[i + 1] for i in range(len(taken) - 1)):
        return []
    tails: list[float] = []  # the smallest last moment of a kept run of each length
    ends: list[int] = []  # its index
    before = [-1] * len(taken)
    for i, m in enumerate(taken):
        at = bisect.bisect_right(tails, m)
        before[i] = ends[at - 1] if at else -1
        if at == len(tails):
            tails.append(m)
            ends.append(i)
        else:
            tails[at], ends[at] = m, i
    kept = bytearray(len(taken))
    i = ends[-1] if ends else -1
    while i >= 0:
        kept[i] = 1
        i = before[i]
    moved = [i for i in range(len(taken)) if not kept[i]]
    first = next(taken[i] for i in range(len(taken)) if kept[i])
    high = first
    for i in range(len(taken)):
        if kept[i]:
            high = taken[i]
        else:
            taken[i] = high
    return moved


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


class _Stale(Exception):
    """The kept walk names an event the log no longer holds as it was."""


@dataclass(slots=True)
class _Broken:
    rowid: int
    exact_back_to: float
    why: str


@dataclass(slots=True)
class PastLog:
    """The event log's moments, with what earlier walks undid, for one store.

    ``at`` is the one path to the past: the time dial and every reading verb's
    ``--as-of`` call it. Walks reach back from now, and the oldest point reached (the
    frontier) moves only back. Every change a walk undoes is kept as columns
    (``intervals.Changes``): a moment at or after the frontier is then a selection, each
    record's oldest change after the moment giving what it was (its ``before``), with no
    event undone again; a moment before the frontier extends it.
    """

    store: StoreBase
    typed: Typed = listed_from_data
    checkpoint_every: int = CHECKPOINT_EVERY
    after_walk: Callable[[int], None] | None = None
    """Told how many events a walk undid, or how many records it built from a kept
    walk, after it (the dashboard settles the heap)."""
    keep: PastKeep | None = None
    """Where a walk of the whole log is kept between processes (``pastkeep``)."""
    keep_from: int | None = None
    """The fewest events a log holds for its walk to be kept (None: ``KEEP_FROM``)."""
    _sums: array[int] = field(default_factory=lambda: array("q"))
    """Per event, ``pastkeep.checksum`` of its stored text (0: not undone)."""
    _kept: bool = False
    """What the walks found is what ``keep`` holds (nothing to save)."""
    _distrust: bool = False
    """The kept walk was found not to be the log's: it is not read again by this log,
    and the walk made instead replaces it."""
    _rowids: array[int] = field(default_factory=lambda: array("q"))
    _moments: array[float] = field(default_factory=lambda: array("d"))
    _taken: array[float] = field(default_factory=lambda: array("d"))
    """``_taken[i]``: the moment event ``i`` is taken at, nondecreasing (see the module's
    "Events newer than T")."""
    _top: int = -1
    _now: dict[str, Row] | None = None
    """The rows the walks started from, by id."""
    _changes: Changes | None = None
    """Every change the walks undid (newer than the frontier)."""
    _frontier_at: int = -1
    """The rowid the walks reached: the reconstruction there is ``_frontier``."""
    _frontier: dict[str, Memory | None] = field(default_factory=dict)
    """The records the walks changed, as they were at the frontier (None: not yet
    created); the others are as they are now."""
    _indexed: tuple[Sequence[Row], list[str]] | None = None
    """The rows last asked about, with their ids."""
    _broken: _Broken | None = None
    _stamps: dict[str, tuple[list[int], list[object]]] | None = None
    """Per record, the rowids of the events that wrote it and the ``reinforcedAt``
    each wrote (read when first needed)."""
    _logged: set[str] | None = None
    """The ids of the records some event names (read when first needed)."""
    reordered: list[int] = field(default_factory=list)
    """The indexes of the events dated out of the order they were written, each taken
    between its neighbours (``in_written_order``)."""
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """One walk at a time: two readers (the dial and the last visit's diff, say) share
    the changes and the frontier, which a walk changes as it goes."""

    def reorder_line(self) -> str:
        """What the walk did with dates out of order ("" when there were none)."""
        if not self.reordered:
            return ""
        first = self.reordered[0]
        return (f"{len(self.reordered)} event(s) of pi's log are dated out of the order they "
                f"were written (the first: rowid {self._rowids[first]}); each is taken in "
                "the order written, between its neighbours")  # fmt: skip

    async def stamps_after(self, boundary: int, ids: Collection[str]) -> dict[str, object]:
        """``Reads.stamps_after``: each of ``ids``' stamp as the first event after
        ``boundary`` naming it wrote it (the records no such event names: left out)."""
        stamps = await self._read_stamps()
        out: dict[str, object] = {}
        for record_id in ids:
            found = stamps.get(record_id)
            if found is not None:
                i = bisect.bisect_right(found[0], boundary)
                if i < len(found[0]):
                    out[record_id] = found[1][i]
        return out

    async def _read_stamps(self) -> dict[str, tuple[list[int], list[object]]]:
        """Each record's confirmation stamp as every event wrote it (one statement)."""
        if self._stamps is None and self._complete:
            assert self._changes is not None
            self._stamps = self._changes.stamps_by_record(self._rowids)
        if self._stamps is None:
            rows = await self.store.query(
                "SELECT e.rowid, json_extract(j.value, '$.id'), "
                "json_extract(j.value, '$.reinforcedAt') FROM events e, "
                "json_each(e.data, '$.after') j WHERE json_valid(e.data) "
                "AND json_type(e.data, '$.after') = 'array' AND e.rowid <= ? ORDER BY e.rowid",
                (self._top,),
            )
            stamps: dict[str, tuple[list[int], list[object]]] = {}
            for rowid, record_id, stamp in rows:
                if isinstance(record_id, str):
                    rowids, values = stamps.setdefault(record_id, ([], []))
                    rowids.append(int(rowid))
                    values.append(stamp)
            self._stamps = stamps
        return self._stamps

    async def _read_logged(self) -> set[str]:
        """The ids of every record an event up to ``_top`` names (one statement)."""
        if self._logged is None and self._complete:
            assert self._changes is not None
            self._logged = set(self._changes.named())
        if self._logged is None:
            rows = await self.store.query(
                "SELECT DISTINCT json_extract(j.value, '$.id') FROM events e, "
                "json_each(e.data, '$.after') j WHERE json_valid(e.data) "
                "AND json_type(e.data, '$.after') = 'array' AND e.rowid <= ?",
                (self._top,),
            )
            self._logged = {r[0] for r in rows if isinstance(r[0], str)}
        return self._logged

    @property
    def _least(self) -> int:
        """The fewest events a log holds for its walk to be kept."""
        return KEEP_FROM if self.keep_from is None else self.keep_from

    @property
    def _complete(self) -> bool:
        """The walks undid every event of the log: the changes name every record an
        event names, with every stamp written."""
        return self._broken is None and self._frontier_at == 0 and self._changes is not None

    def _stamped_then(
        self, stamps: dict[str, tuple[list[int], list[object]]], record: Memory, boundary: int
    ) -> Memory:
        """``record`` with the confirmation stamp its newest event at or before
        ``boundary`` wrote (``stamps``: ``_read_stamps``). A stamp moves without an
        event (§5.6) and only forward, so that one is known to have been there then; a
        later one, even one dated earlier than the moment, may have been given after it.
        A record no event wrote keeps the stamp it has."""
        found = stamps.get(record.id)
        if found is None:
            return record
        i = bisect.bisect_right(found[0], boundary) - 1
        stamp = found[1][i] if i >= 0 else None
        stamp = stamp if isinstance(stamp, str) else None
        if stamp == record.reinforced_at:
            return record
        if isinstance(record, StoredMemory):  # the stored object says the same
            data = dict(record.data)
            if stamp is None:
                data.pop("reinforcedAt", None)
            else:
                data["reinforcedAt"] = stamp
            return replace(record, reinforced_at=stamp, data=data)
        return replace(record, reinforced_at=stamp)

    async def _read_moments(self, upto: int, kept: Kept | None = None) -> None:
        """Read the moment of every event up to rowid ``upto`` (one statement), those up
        to ``kept.top`` from ``kept``."""
        low = -1 if kept is None else kept.top
        rows = await self.store.query(
            "SELECT rowid, CASE WHEN json_valid(data) THEN json_extract(data, '$.at') END "
            "FROM events WHERE rowid > ? AND rowid <= ? ORDER BY rowid",
            (low, upto),
        )
        inf = float("inf")
        # Compact columns (8 bytes an event), not lists: at 300,000 events four lists
        # of Python numbers held 38 MB for as long as the store stayed open.
        rowids, moments, sums = array("q"), array("d"), array("q")
        if kept is not None:
            rowids.frombytes(kept.rowids)
            moments.frombytes(kept.moments)
            sums.frombytes(kept.sums)
        rowids.extend(int(r[0]) for r in rows)
        moments.extend(inf if (m := parse_ms(r[1])) is None else m for r in rows)
        sums.frombytes(bytes(8 * len(rows)))
        del rows
        self._rowids, self._moments, self._sums = rowids, moments, sums
        # An unreadable moment is taken at the next readable one (inf when none is)...
        taken = array("d", moments)
        later = inf
        for i in range(len(taken) - 1, -1, -1):
            if taken[i] == inf:
                taken[i] = later
            else:
                later = taken[i]
        # ...and the moments in the order written: an event dated out of that order (a
        # clock set back, or one re-dated forward) is taken between its neighbours.
        self.reordered = in_written_order(taken)
        self._taken = taken
        self._top = upto

    def _boundary(self, when: float) -> int:
        """The rowid of the newest event written at or before ``when`` (0: none)."""
        i = bisect.bisect_right(self._taken, when) - 1  # _taken is nondecreasing
        return self._rowids[i] if i >= 0 else 0

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

    def _adopt(self, kept: Kept) -> bool:
        """Take what ``kept`` found below the frontier (at its ``top``), if the records
        there are those it started from."""
        assert self._now is not None and self._changes is not None
        import numpy as np

        overlay, now = self._frontier, self._now
        then: list[Row] = [r for i, r in overlay.items() if r is not None]
        then += [r for i, r in now.items() if i not in overlay]
        if fingerprint(then, LOGGED) != kept.rows:
            return False
        event = np.frombuffer(kept.event, dtype=np.int32)
        rec = np.frombuffer(kept.rec, dtype=np.int32)
        slot = np.frombuffer(kept.slot, dtype=np.int32)
        events = len(kept.rowids) // 8
        if len(event) and (
            int(event.min()) < 0
            or int(event.max()) >= events
            or int(rec.min()) < 0
            or int(rec.max()) >= len(kept.ids)
            or int(slot.min()) < 0
        ):
            return False
        self._changes.adopt(kept.ids, kept.event, kept.rec, kept.slot, kept.gone, kept.stamps)
        self._frontier_at = kept.frontier
        if kept.broken is not None:
            self._broken = _Broken(*kept.broken)
        return True

    async def _save(self) -> None:
        """Keep what the walks found, for the next process (when they reached the
        start of the log or the event that does not follow)."""
        self._kept = True
        if self.keep is None or self._changes is None or self._now is None:
            return
        if len(self._rowids) < self._least:  # walked again in less time than adopting
            return
        ids, event, rec, slot, gone, stamps = self._changes.columns()
        broken = self._broken
        kept = Kept(
            format=FORMAT,
            top=self._top,
            rows=fingerprint(self._now.values(), LOGGED),
            rowids=self._rowids.tobytes(),
            moments=self._moments.tobytes(),
            sums=self._sums.tobytes(),
            ids=ids,
            event=event,
            rec=rec,
            slot=slot,
            gone=gone,
            stamps=list(stamps),
            frontier=self._frontier_at,
            broken=None if broken is None else (broken.rowid, broken.exact_back_to, broken.why),
        )
        await asyncio.to_thread(self.keep.save, encode(kept))

    async def _build(self, wanted: Iterable[int]) -> None:
        """Build the ``before`` of each change in ``wanted`` from the log (changes a
        kept walk found), each event's text checked against the sum kept."""
        changes = self._changes
        assert changes is not None
        by_event: dict[int, list[int]] = {}
        for change in wanted:
            by_event.setdefault(changes.event_of(change), []).append(change)
        rowids, events = self._rowids, sorted(by_event)
        for start in range(0, len(events), 500):
            part = events[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = await self.store.query(
                f"SELECT rowid, data FROM events WHERE rowid IN ({marks})",
                tuple(rowids[e] for e in part),
            )
            if len(rows) != len(part):
                raise _Stale
            for rowid, raw in rows:
                event = bisect.bisect_left(rowids, rowid)
                if checksum(raw) != self._sums[event]:
                    raise _Stale
                # Checked when the walk undid it, and the same text: typed, not checked.
                befores = _parsed(raw)["before"]
                for change in by_event[event]:
                    changes.versions[change] = self.typed(befores[changes.slot_of(change)], 0.0)
                    changes.unbuilt -= 1

    def _first_after(self, now: Sequence[Row], rowid: int) -> list[int]:
        """Each row's oldest change after the event at ``rowid`` (``NONE``: none)."""
        changes = self._changes
        assert changes is not None
        event = bisect.bisect_right(self._rowids, rowid) - 1
        if not len(changes):
            return [NONE] * len(now)
        held = self._indexed
        # The dashboard hands in a new list of the same rows each move: the same rows,
        # compared one by one (by identity first), keep the ids made for them.
        if held is None or (held[0] is not now and held[0] != now):
            held = self._indexed = (now, [r.id for r in now])
        return changes.first_after(held[1], event)

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

    def _break(self, rowid: int, event_id: object, why: str) -> None:
        """The event at ``rowid`` cannot be undone: the log is exact down to it."""
        i = bisect.bisect_left(self._rowids, rowid)
        inf = float("inf")
        moment = self._moments[i] if i < len(self._moments) else inf
        if moment == inf:  # its own moment unreadable: exact back to the next newer one
            moment = min((m for m in self._moments[i + 1 :] if m != inf), default=inf)
        # No readable moment newer either: exact only as it is now (inf). Never the
        # clock's now, which a reader of the past has moved to the moment it asks for.
        self._broken = _Broken(rowid, moment, f"event {event_id}: {why}")


def _created_after(created_at: str, shown_iso: str, shown: float) -> bool:
    """``created_at`` is after the moment ``shown`` (``shown_iso``: the same, as pi writes
    times, which then compare as text)."""
    if len(created_at) == 24 and created_at[-1] == "Z":
        return created_at > shown_iso
    created = parse_ms(created_at)
    return created is not None and created > shown


def _undo(
    event_id: object,
    scope: object,
    raw: object,
    overlay: dict[str, Memory | None],
    now: Mapping[str, Row],
    typed: Typed,
) -> str | list[tuple[str, int, Memory | None, str | None]]:
    """Undo one event into ``overlay``: each record it changed (its id, its place in the
    event's arrays, what it was before, and the stamp it wrote), or why it cannot be."""
    fast = befores_fast(raw, str(event_id), str(scope), 0.0) if typed is listed_from_data else None
    if fast is not None:  # the one-pass reading said yes: the befores are typed
        return _undone(*fast, overlay, now)
    try:
        data: Any = _parsed(raw)
    except (ValueError, TypeError, RecursionError):
        return "not JSON"
    problem = event_problem(data, str(event_id), str(scope), after_records=False)
    if problem is not None:
        return problem
    when = 0.0  # quality is taken at the end, for the moment shown
    befores = [None if b is None else typed(b, when) for b in data["before"]]
    return _undone(befores, data["after"], overlay, now)


def _parsed(raw: object) -> Any:
    """``JSON.parse`` of an event's text: orjson, or the json module where orjson
    refuses what JavaScript reads (a lone surrogate). Raises ``ValueError``."""
    try:
        return orjson.loads(raw)  # type: ignore[arg-type]
    except (orjson.JSONDecodeError, TypeError):
        return loads(raw)  # type: ignore[arg-type]


def _undone(
    befores: Sequence[Memory | None],
    afters: Sequence[dict[str, Any]],
    overlay: dict[str, Memory | None],
    now: Mapping[str, Row],
) -> str | list[tuple[str, int, Memory | None, str | None]]:
    """``_undo``'s second half, on a valid event's typed befores and stored afters."""
    changes: list[tuple[str, int, Memory | None, str | None]] = []
    for slot, (was, after) in enumerate(zip(befores, afters, strict=True)):
        record_id = after["id"]
        current = overlay[record_id] if record_id in overlay else now.get(record_id)
        if not isinstance(current, Memory) or not follows(current, after):
            return f"its change to {record_id} does not lead to the record as it is later"
        stamp = after.get("reinforcedAt")
        changes.append((record_id, slot, was, stamp if isinstance(stamp, str) else None))
    for record_id, _, was, _ in changes:
        overlay[record_id] = was
    return changes


FIELD_NAMES = {
    "kind": "kind",
    "content": "content",
    "scope": "scope",
    "created_at": "createdAt",
    "updated_at": "updatedAt",
    "revision": "revision",
    "layer": "layer",
    "status": "status",
    "utility": "feedback.utility",
    "accuracy": "feedback.accuracy",
    "search_terms": "searchTerms",
    "suppressed_hashes": "suppressedHashes",
    "evidence": "evidence",
}
"""Each compared field as the stored record names it."""

DIFFED = (*LOGGED, "evidence")
"""What a diff compares: the logged fields, and ``evidence``, which pi may also move
without an event, but which an event that carries it (a correction's) changes in the
reconstruction; so a difference in it is one the log recorded."""


def changed_fields(a: Memory, b: Memory) -> dict[str, tuple[Any, Any]]:
    """The fields ``a`` and ``b`` differ in (stored names), with both values."""
    return {
        FIELD_NAMES[f]: (getattr(a, f), getattr(b, f))
        for f in DIFFED
        if getattr(a, f) != getattr(b, f)
    }


@dataclass(frozen=True, slots=True)
class Change:
    """One record that existed at both moments and differs between them."""

    start: Memory
    end: Memory
    fields: dict[str, tuple[Any, Any]]


@dataclass(frozen=True, slots=True)
class Diff:
    """The records added, changed and removed between two moments."""

    start: float
    end: float
    added: tuple[Memory, ...]
    """Records that exist at ``end`` and did not at ``start``."""
    changed: tuple[Change, ...]
    removed: tuple[Memory, ...]
    """Records that existed at ``start`` and not at ``end`` (as they were at ``start``)."""


def diff(start: Past, end: Past) -> Diff:
    """The difference between the records at ``start.when`` and at ``end.when``, on the
    fields the event log records (in ``end``'s order, then ``start``'s)."""
    before = by_id(start.rows)
    after = by_id(end.rows)
    changed = []
    for record_id, now in after.items():
        was = before.get(record_id)
        if was is not None and (fields := changed_fields(was, now)):
            changed.append(Change(was, now, fields))
    return Diff(
        start=start.when,
        end=end.when,
        added=tuple(m for i, m in after.items() if i not in before),
        changed=tuple(changed),
        removed=tuple(m for i, m in before.items() if i not in after),
    )


def by_id(rows: Iterable[Row]) -> dict[str, Memory]:
    return {r.id: r for r in rows if isinstance(r, Memory)}
