"""The event log as the walks read it: the moments of its events, their stamps, the
records they name, and a walk kept between processes (``PastLog``'s base: ``past.py``
says how the past is replayed)."""

from __future__ import annotations

import asyncio
import bisect
from array import array
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from ..base import StoreBase
from ..js import parse_ms
from ..records.model import CorruptRow, Memory, StoredMemory
from ..records.rows import listed_from_data, loads
from .intervals import NONE, Changes
from .pastkeep import FORMAT, Kept, PastKeep, checksum, encode, fingerprint

Typed = Callable[[dict[str, Any], float], Memory]
"""How a record dict from an event becomes a typed record (listed, or with its stored object)."""


Row = Memory | CorruptRow


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


class _Stale(Exception):
    """The kept walk names an event the log no longer holds as it was."""


@dataclass(slots=True)
class _Broken:
    rowid: int
    exact_back_to: float
    why: str


def _parsed(raw: object) -> Any:
    """``JSON.parse`` of an event's text: orjson, or the json module where orjson
    refuses what JavaScript reads (a lone surrogate). Raises ``ValueError``."""
    try:
        return orjson.loads(raw)  # type: ignore[arg-type]
    except (orjson.JSONDecodeError, TypeError):
        return loads(raw)  # type: ignore[arg-type]


@dataclass(slots=True)
class LogEvents:
    """The event log's moments, what earlier walks undid and what a walk keeps: the
    fields of ``PastLog`` (``past.py``), and its reads of the log and of a kept walk.

    The event log's moments, with what earlier walks undid, for one store.

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
