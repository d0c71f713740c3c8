"""The store's past as intervals: each version of a record is valid from one event to
the next, held as columns.

A walk back through the event log (``PastLog``) undoes events newest first; each record
an event changed was, just before it, the event's ``before`` (or did not exist yet). So
the record as of the state just after event ``k`` is the ``before`` of the oldest change
to it after ``k``, or the record as it is now when nothing changed it since. ``Changes``
keeps one entry per record an undone event changed:

- the event (its index among the log's events, oldest first);
- the record (an index: the records as they are now come first, in their order);
- its place in the event's ``before`` and ``after`` arrays;
- whether ``before`` was null (the event created the record);
- the ``before`` as a typed record (built when the walk undid it, or later from the log).

``first_after`` then answers, for every record at once, which change is its first after
event ``k``: a sorted search over the columns (numpy, for many changes), not a replay.
No Textual.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..records.model import Memory

NONE = -1
"""``first_after``'s answer for a record with no change after the event."""

SEARCHED_FROM = 5_000
"""Fewer changes than this are scanned in Python (numpy is not imported for them: a
walk back to the last visit undoes a handful); more are searched with numpy."""


class Changes:
    """Every change the walks undid, as columns (see the module). Records are indexed
    in the order a change first names them."""

    __slots__ = (
        "_asked",
        "_event",
        "_gone",
        "_ids",
        "_rec",
        "_size",
        "_slot",
        "_sorted",
        "stamps",
        "unbuilt",
        "versions",
    )

    def __init__(self, events: int) -> None:
        """``events``: how many events the log holds (event indexes run below it)."""
        self._ids: dict[str, int] = {}
        self._size = events + 1
        # Compact columns (4 bytes an entry, 1 for ``_gone``), not lists of ints: at
        # 300,000 changes a list of Python ints costs 10 MB a column.
        self._event = array("i")
        self._rec = array("i")
        self._slot = array("i")
        self._gone = bytearray()
        self.versions: list[Memory | None] = []
        """Each change's ``before``, typed (None when it was null, or not built yet)."""
        self.stamps: list[str | None] = []
        """The confirmation stamp (``reinforcedAt``) each change's ``after`` wrote."""
        self.unbuilt = 0
        """How many changes of a record (not a creation) have no typed ``before`` yet."""
        self._sorted: tuple[Any, Any, Any] | None = None
        self._asked: tuple[Sequence[str], int, Any] | None = None
        """The ids last asked about (compared by identity), with how many records were
        known then, and each one's record index."""

    def __len__(self) -> int:
        return len(self._event)

    def _index(self, record_id: str) -> int:
        rec = self._ids.get(record_id)
        if rec is None:
            rec = self._ids[record_id] = len(self._ids)
        return rec

    def add(
        self, event: int, record_id: str, slot: int, was: Memory | None, stamp: str | None
    ) -> None:
        """Event index ``event`` changed ``record_id`` (at ``slot`` of its arrays), which
        was ``was`` just before it (None: it did not exist yet), and wrote ``stamp``."""
        self._event.append(event)
        self._rec.append(self._index(record_id))
        self._slot.append(slot)
        self._gone.append(was is None)
        self.versions.append(was)
        self.stamps.append(stamp)
        self._sorted = None

    def adopt(
        self,
        ids: Sequence[str],
        event: bytes,
        rec: bytes,
        slot: bytes,
        gone: bytes,
        stamps: Sequence[str | None],
    ) -> None:
        """Add changes kept by another process (``columns``: int32 and bytes), their
        records named by ``ids``; their ``before`` is built later, from the log
        (``versions`` None)."""
        index = array("i", [self._index(record_id) for record_id in ids])
        self._event.frombytes(event)
        kept = array("i")
        kept.frombytes(rec)
        self._rec.extend(index[r] for r in kept)
        self._slot.frombytes(slot)
        self._gone.extend(gone)
        self.versions.extend([None] * len(kept))
        self.unbuilt += len(gone) - sum(gone)
        self.stamps.extend(stamps)
        self._sorted = None

    def columns(self) -> tuple[list[str], bytes, bytes, bytes, bytes, list[str | None]]:
        """Everything but the typed records, as ``adopt`` takes it: the records' ids (in
        the order of their indexes), the int32 columns and ``gone``."""
        return (
            list(self._ids),
            self._event.tobytes(),
            self._rec.tobytes(),
            self._slot.tobytes(),
            bytes(self._gone),
            self.stamps,
        )

    def event_of(self, change: int) -> int:
        return self._event[change]

    def slot_of(self, change: int) -> int:
        return self._slot[change]

    @property
    def gone_at(self) -> bytearray:
        """Per change, 1 when the record did not exist just before it."""
        return self._gone

    def stamps_by_record(self, rowids: Sequence[int]) -> dict[str, tuple[list[int], list[object]]]:
        """Per record, the rowids (``rowids``: by event index) of the changes to it,
        oldest first, and the stamp each wrote: what ``PastLog`` reads from the log
        otherwise, given by a walk of all of it."""
        names = list(self._ids)
        events, recs, stamps = self._event, self._rec, self.stamps
        found: dict[str, tuple[list[int], list[object]]] = {}
        for i in sorted(range(len(events)), key=events.__getitem__):
            kept = found.setdefault(names[recs[i]], ([], []))
            kept[0].append(rowids[events[i]])
            kept[1].append(stamps[i])
        return found

    def changed_after(self, event: int) -> set[str]:
        """The ids of the records a change after event index ``event`` names."""
        recs = {rec for at, rec in zip(self._event, self._rec, strict=True) if at > event}
        names = list(self._ids)
        return {names[rec] for rec in recs}

    def named(self) -> list[str]:
        """The ids of the records some change names."""
        return list(self._ids)

    def first_after(self, records: Sequence[str], event: int) -> list[int]:
        """For each record id of ``records``, its oldest change after event index
        ``event`` (-1: before every event), or NONE when there is none."""
        if not self._event:
            return [NONE] * len(records)
        if len(self._event) < SEARCHED_FROM:
            return self._scanned(records, event)
        return self._searched(records, event)

    def _scanned(self, records: Sequence[str], event: int) -> list[int]:
        oldest: dict[int, int] = {}
        events = self._event
        for change, (at, rec) in enumerate(zip(events, self._rec, strict=True)):
            if at > event and (rec not in oldest or at < events[oldest[rec]]):
                oldest[rec] = change
        ids = self._ids
        return [oldest.get(ids.get(record_id, NONE), NONE) for record_id in records]

    def _searched(self, records: Sequence[str], event: int) -> list[int]:
        import numpy as np  # a long walk's: numpy loads here, not at start

        if self._sorted is None:
            rec = np.frombuffer(self._rec, dtype=np.int32).astype(np.int64)
            ev = np.frombuffer(self._event, dtype=np.int32).astype(np.int64)
            order = np.lexsort((ev, rec))
            key = rec[order] * self._size + ev[order] + 1
            self._sorted = (key, order, rec[order])
        key, order, rec_sorted = self._sorted
        held = self._asked
        if held is not None and held[0] is records and held[1] == len(self._ids):
            asked = held[2]
        else:  # each row's record index, kept while they and the records known hold
            ids = self._ids
            asked = np.fromiter(
                (ids.get(record_id, NONE) for record_id in records),
                dtype=np.int64,
                count=len(records),
            )
            self._asked = (records, len(self._ids), asked)
        probe = asked * self._size + (event + 1)
        pos = np.searchsorted(key, probe, side="right")
        inside = np.minimum(pos, len(key) - 1)
        found = (pos < len(key)) & (rec_sorted[inside] == asked) & (asked != NONE)
        answer: list[int] = np.where(found, order[inside], NONE).tolist()
        return answer
