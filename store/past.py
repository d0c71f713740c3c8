"""The store as it was at a moment in the past, replayed from the event log.

Nearly every change pi makes to a record is an event carrying the record's full
``before`` and ``after`` (§2.5, §4.1). So the records as they were at a moment T are
the current rows with every event newer than T undone, newest first: each record it
names goes back to its ``before``, or away where ``before`` is null.

What the log cannot give
    pi's confirmation stamp (§5.6) moves ``reinforcedAt`` with no event, and the
    issue that asked for this names ``evidence`` and ``sourceEntryId`` as moving the
    same way. These fields (``UNLOGGED``) are therefore left out when an event is
    checked against the reconstruction, and a record's value for them is the one the
    reconstruction gives: its current row's, or the ``before`` of its oldest change
    after T. A reader shows them as not in the event log.

Never guess
    Each event undone must follow from the reconstruction: its ``after`` must be, field
    for field (``UNLOGGED`` aside), the record as reconstructed so far. An event that is
    not readable (§2.5's checks) or that does not follow stops the walk there. The
    records are then exact back to that event's moment only, and a moment older than
    that is refused by the caller (``Past.clamped``), never shown as if known.

Events newer than T
    The walk undoes events in rowid order (pi's insertion order), newest first, and
    stops at the first one whose ``at`` is at or before T: the state after the newest
    event written at or before T. An event whose ``at`` is unreadable is never "at or
    before" anything, so the walk reaches it and stops there.

Speed
    The moments of all events are read once (one statement, ``json_extract`` in
    SQLite), then kept up to date. A walk starts at the nearest checkpoint at or after
    the moment, not at now, and leaves a checkpoint every ``CHECKPOINT_EVERY`` events
    it undoes; a checkpoint is the reconstruction at that event, kept as the records
    that differ from now (the records themselves are shared with the current rows and
    with the other checkpoints).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from ._js import iso, parse_ms
from .base import StoreBase
from .model import CorruptRow, Memory
from .rows import listed_from_data, loads
from .validate import event_problem

Typed = Callable[[dict[str, Any], float], Memory]
"""How a record dict from an event becomes a typed record (listed, or with its stored object)."""

Row = Memory | CorruptRow

UNLOGGED = ("source_entry_id", "evidence", "reinforced_at")
"""Record fields pi changes without an event (as ``Memory`` names them)."""

UNLOGGED_JSON = ("sourceEntryId", "evidence", "reinforcedAt")
"""The same fields as the stored record names them."""

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

CHECKPOINT_EVERY = 5_000
"""Events undone between two checkpoints of a walk."""

READ_CHUNK = 2_000
"""Events read from SQLite at a time by a walk."""

_GONE = None  # a record that did not exist yet


def same_logged(a: Memory, b: Memory) -> bool:
    """``a`` and ``b`` agree on every field the event log records."""
    return a.id == b.id and all(getattr(a, f) == getattr(b, f) for f in LOGGED)


@dataclass(frozen=True, slots=True)
class Past:
    """The records as of a moment, replayed from the event log."""

    when: float
    """The moment asked for (epoch ms)."""
    rows: tuple[Row, ...]
    """The records that existed then, in the current rows' order, quality as of
    ``when``. A corrupt row is kept as it is now: what it was cannot be read."""
    walked: frozenset[str]
    """The records whose row comes from the event log (changed since ``when``); the
    others are their current rows."""
    exact_back_to: float | None
    """The oldest moment the log gives exactly, or None when it is readable to its start."""
    stopped: str
    """Why the walk stops at ``exact_back_to`` ("" when it does not)."""
    boundary: int
    """The rowid of the newest event at or before ``when`` (0: before every event)."""
    undone: int
    """How many events were undone to get here (from the nearest checkpoint)."""

    @property
    def clamped(self) -> bool:
        """``when`` is older than the log can give: the rows are only exact as of
        ``exact_back_to``, and a reader must refuse ``when`` rather than show them."""
        return self.exact_back_to is not None and self.when < self.exact_back_to

    def limit_line(self) -> str:
        """ "exact back to …; older changes unreadable", or ""."""
        if self.exact_back_to is None:
            return ""
        return f"exact back to {iso(self.exact_back_to)}; older changes unreadable ({self.stopped})"


@dataclass(slots=True)
class _Checkpoint:
    rowid: int
    """The reconstruction just after this event (every newer one undone)."""
    overlay: dict[str, Memory | None]
    """The records that differ from now: as they were, or None where they did not exist."""


@dataclass(slots=True)
class _Broken:
    rowid: int
    exact_back_to: float
    why: str


@dataclass(slots=True)
class PastLog:
    """The event log's moments, with the checkpoints of earlier walks, for one store.

    ``at`` is the one path to the past: the time dial and every reading verb's
    ``--as-of`` call it.
    """

    store: StoreBase
    typed: Typed = listed_from_data
    checkpoint_every: int = CHECKPOINT_EVERY
    _rowids: list[int] = field(default_factory=list)
    _moments: list[float] = field(default_factory=list)
    _floor: list[float] = field(default_factory=list)
    """``_floor[i]`` = the earliest moment among events ``i`` and newer (unreadable: +inf)."""
    _top: int = 0
    _now: dict[str, Row] | None = None
    _checkpoints: list[_Checkpoint] = field(default_factory=list)
    _broken: _Broken | None = None

    async def _read_moments(self, upto: int) -> None:
        """Read the moment of every event up to rowid ``upto`` (one statement)."""
        rows = await self.store.query(
            "SELECT rowid, CASE WHEN json_valid(data) THEN json_extract(data, '$.at') END "
            "FROM events WHERE rowid <= ? ORDER BY rowid",
            (upto,),
        )
        inf = float("inf")
        self._rowids = [int(r[0]) for r in rows]
        self._moments = [inf if (m := parse_ms(r[1])) is None else m for r in rows]
        floor = [inf] * len(self._moments)
        low = inf
        for i in range(len(floor) - 1, -1, -1):
            low = min(low, self._moments[i])
            floor[i] = low
        self._floor = floor
        self._top = upto

    def _boundary(self, when: float) -> int:
        """The rowid of the newest event written at or before ``when`` (0: none)."""
        i = bisect.bisect_right(self._floor, when) - 1
        # _floor is nondecreasing; the newest event i with moment <= when is the last
        # index whose suffix minimum is <= when.
        return self._rowids[i] if i >= 0 else 0

    async def at(self, when: float, now: Sequence[Row], upto: int) -> Past:
        """The records as of ``when`` (epoch ms), from ``now`` (the current rows, which
        reflect every event up to rowid ``upto``)."""
        if self._now is None or self._top != upto:
            self._now = {r.id: r for r in now}
            self._checkpoints, self._broken = [], None
            await self._read_moments(upto)
        boundary = self._boundary(when)
        undone = 0
        if self._broken is None or self._broken.rowid < boundary:
            start = self._nearest(boundary)
            overlay = dict(start.overlay)
            undone = await self._walk(start.rowid, boundary, overlay)
        broken = self._broken
        if broken is not None and broken.rowid >= boundary:
            overlay = self._nearest(broken.rowid).overlay  # the log is exact down to here
        shown = when if broken is None else max(when, broken.exact_back_to)
        rows: list[Row] = []
        for row in now:
            if not isinstance(row, Memory):
                rows.append(row)  # corrupt now: what it was cannot be read
                continue
            was = overlay[row.id] if row.id in overlay else row
            if was is not _GONE:
                rows.append(replace(was, quality_at=shown))
        return Past(
            when=when,
            rows=tuple(rows),
            walked=frozenset(overlay),
            exact_back_to=None if broken is None else broken.exact_back_to,
            stopped="" if broken is None else broken.why,
            boundary=boundary,
            undone=undone,
        )

    def _nearest(self, rowid: int) -> _Checkpoint:
        """The checkpoint closest above ``rowid`` (now, when there is none)."""
        best = _Checkpoint(self._top, {})
        for cp in self._checkpoints:
            if rowid <= cp.rowid < best.rowid:
                best = cp
        return best

    async def _walk(self, start: int, boundary: int, overlay: dict[str, Memory | None]) -> int:
        """Undo the events in (``boundary``, ``start``] newest first into ``overlay``;
        leave checkpoints on the way; stop at the first that does not follow."""
        assert self._now is not None
        undone = 0
        high = start
        while high > boundary:
            rows = await self.store.query(
                "SELECT rowid, id, scope, data FROM events WHERE rowid > ? AND rowid <= ? "
                "ORDER BY rowid DESC LIMIT ?",
                (boundary, high, READ_CHUNK),
            )
            if not rows:
                break
            for rowid, event_id, scope, raw in rows:
                why = _undo(event_id, scope, raw, overlay, self._now, self.typed)
                if why is not None:
                    self._break(int(rowid), event_id, why, overlay)
                    return undone
                undone += 1
                if undone % self.checkpoint_every == 0:
                    self._checkpoints.append(_Checkpoint(int(rowid) - 1, dict(overlay)))
            high = int(rows[-1][0]) - 1
        return undone

    def _break(
        self, rowid: int, event_id: object, why: str, overlay: dict[str, Memory | None]
    ) -> None:
        """The event at ``rowid`` cannot be undone: the log is exact down to it."""
        i = bisect.bisect_left(self._rowids, rowid)
        inf = float("inf")
        moment = self._moments[i] if i < len(self._moments) else inf
        if moment == inf:  # its own moment unreadable: exact back to the next newer one
            moment = min((m for m in self._moments[i + 1 :] if m != inf), default=inf)
        if moment == inf:  # no readable moment newer either: exact as of now only
            moment = self.store.now_ms()
        self._broken = _Broken(rowid, moment, f"event {event_id}: {why}")
        self._checkpoints.append(_Checkpoint(rowid, dict(overlay)))


def _undo(
    event_id: object,
    scope: object,
    raw: object,
    overlay: dict[str, Memory | None],
    now: Mapping[str, Row],
    typed: Typed,
) -> str | None:
    """Undo one event into ``overlay``; why it cannot be undone, or None."""
    try:
        data: Any = orjson.loads(raw)  # type: ignore[arg-type]
    except (orjson.JSONDecodeError, TypeError):
        try:
            data = loads(raw)  # type: ignore[arg-type]
        except (ValueError, TypeError, RecursionError):
            return "not JSON"
    problem = event_problem(data, str(event_id), str(scope))
    if problem is not None:
        return problem
    when = 0.0  # quality is taken at the end, for the moment shown
    changes: list[tuple[str, Memory | None]] = []
    for before, after in zip(data["before"], data["after"], strict=True):
        record_id = after["id"]
        current = overlay[record_id] if record_id in overlay else now.get(record_id)
        if not isinstance(current, Memory) or not same_logged(current, typed(after, when)):
            return f"its change to {record_id} does not lead to the record as it is later"
        changes.append((record_id, None if before is None else typed(before, when)))
    for record_id, was in changes:
        overlay[record_id] = was
    return None


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
}
"""Each logged field as the stored record names it."""


def changed_fields(a: Memory, b: Memory) -> dict[str, tuple[Any, Any]]:
    """The logged fields ``a`` and ``b`` differ in (stored names), with both values."""
    return {
        FIELD_NAMES[f]: (getattr(a, f), getattr(b, f))
        for f in LOGGED
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
