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
event ``k``: a sorted search over the columns (numpy), not a replay. No Textual.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .model import Memory

NONE = -1
"""``first_after``'s answer for a record with no change after the event."""


class Changes:
    """Every change the walks undid, as columns (see the module)."""

    __slots__ = (
        "_event",
        "_gone",
        "_ids",
        "_rec",
        "_size",
        "_slot",
        "_sorted",
        "stamps",
        "versions",
    )

    def __init__(self, records: Sequence[str], events: int) -> None:
        """``records``: the ids of the records as they are now, in their order;
        ``events``: how many events the log holds (indexes run below it)."""
        self._ids: dict[str, int] = {}
        for record_id in records:
            self._ids.setdefault(record_id, len(self._ids))
        self._size = events + 1
        self._event: list[int] = []
        self._rec: list[int] = []
        self._slot: list[int] = []
        self._gone: list[bool] = []
        self.versions: list[Memory | None] = []
        """Each change's ``before``, typed (None when it was null, or not built yet)."""
        self.stamps: list[str | None] = []
        """The confirmation stamp (``reinforcedAt``) each change's ``after`` wrote."""
        self._sorted: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]] | None = None

    def __len__(self) -> int:
        return len(self._event)

    def add(
        self, event: int, record_id: str, slot: int, was: Memory | None, stamp: str | None
    ) -> None:
        """Event index ``event`` changed ``record_id`` (at ``slot`` of its arrays), which
        was ``was`` just before it (None: it did not exist yet), and wrote ``stamp``."""
        rec = self._ids.setdefault(record_id, len(self._ids))
        self._event.append(event)
        self._rec.append(rec)
        self._slot.append(slot)
        self._gone.append(was is None)
        self.versions.append(was)
        self.stamps.append(stamp)
        self._sorted = None

    def adopt(
        self,
        ids: Sequence[str],
        event: Sequence[int],
        rec: Sequence[int],
        slot: Sequence[int],
        gone: Sequence[bool],
        stamps: Sequence[str | None],
    ) -> None:
        """Add changes kept by another process (``columns``), their records named by
        ``ids``; their ``before`` is built later, from the log (``versions`` None)."""
        index = [self._ids.setdefault(record_id, len(self._ids)) for record_id in ids]
        self._event.extend(event)
        self._rec.extend(index[r] for r in rec)
        self._slot.extend(slot)
        self._gone.extend(gone)
        self.versions.extend([None] * len(event))
        self.stamps.extend(stamps)
        self._sorted = None

    def columns(
        self,
    ) -> tuple[list[str], list[int], list[int], list[int], list[bool], list[str | None]]:
        """Everything but the typed records, as ``adopt`` takes it."""
        ids = list(self._ids)
        return ids, self._event, self._rec, self._slot, self._gone, self.stamps

    def event_of(self, change: int) -> int:
        return self._event[change]

    def slot_of(self, change: int) -> int:
        return self._slot[change]

    def record_of(self, change: int) -> int:
        return self._rec[change]

    def named(self) -> list[str]:
        """The ids of the records some change names."""
        ids = list(self._ids)
        return [ids[r] for r in set(self._rec)]

    def gone(self, change: int) -> bool:
        """The record did not exist just before ``change``."""
        return self._gone[change]

    def index_of(self, record_id: str) -> int:
        """The record's index (NONE: no record of that id is known)."""
        return self._ids.get(record_id, NONE)

    def first_after(self, records: NDArray[np.int64], event: int) -> list[int]:
        """For each record index of ``records`` (NONE: none), its oldest change after
        event index ``event`` (-1: before every event), or NONE when there is none."""
        if not self._event:
            return [NONE] * len(records)
        if self._sorted is None:
            rec = np.asarray(self._rec, dtype=np.int64)
            ev = np.asarray(self._event, dtype=np.int64)
            order = np.lexsort((ev, rec))
            key = rec[order] * self._size + ev[order] + 1
            self._sorted = (key, order, rec[order])
        key, order, rec_sorted = self._sorted
        probe = records * self._size + (event + 1)
        pos = np.searchsorted(key, probe, side="right")
        inside = np.minimum(pos, len(key) - 1)
        found = (pos < len(key)) & (rec_sorted[inside] == records) & (records != NONE)
        chosen: NDArray[np.int64] = np.where(found, order[inside], NONE)
        answer: list[int] = chosen.tolist()
        return answer
