"""The live change poller: what other connections (pi, the demo learner) committed.

No Textual here: the app runs ``poll`` in a worker every ``INTERVAL`` seconds
and hands what it returns to ``DashboardState.live_changed``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from store import CorruptRow, Event, Memory

from .state import DashboardState, EventRow, Row

INTERVAL = 0.2
"""Seconds between checks for commits by other connections."""
CHECK_EVERY = 30.0
"""At most this often, a change also runs SQLite's quick check of every page: a
read of what changed would not notice a page damaged elsewhere (0.15 s at
100,000 records, in SQLite's thread; the first change after a load always does)."""


@dataclass(frozen=True, slots=True)
class Delta:
    """What changed since the last poll."""

    events: tuple[EventRow, ...]
    rows: tuple[Row, ...]
    at: float


class ChangePoller:
    """Cheap when nothing changed: one ``PRAGMA data_version``, nothing read.

    A change costs what changed: the new events, and the records they name.
    Confirmation stamps (§5.6) come without an event, from a learning run that
    finished; a count of the done sources (an index answers it) says when one
    did, and only then are the records carrying its stamp looked for.

    A change it failed to read is read again on a later poll (every ``RETRY``
    seconds), until it is read: no commit by another connection is ever skipped.
    """

    RETRY = 2.0

    def __init__(self, state: DashboardState) -> None:
        self.state = state
        self._retry_at: float | None = None
        self._checked_at: float | None = None

    async def poll(self) -> Delta | None:
        """The change since the last call, or None (raises ``StoreError``)."""
        store = self.state.store
        if store is None:
            return None
        store.check_file()  # replaced or deleted on disk: raises Replaced, reads nothing
        if self._retry_at is not None:
            if time.monotonic() < self._retry_at:
                return None
            await store.changed()  # read now whatever the change signal says
        elif not await store.changed():
            return None
        self._retry_at = time.monotonic() + self.RETRY  # until this read succeeds
        delta = await self._read()
        self._retry_at = None
        return delta

    async def _read(self) -> Delta:
        state = self.state
        store = state.store
        assert store is not None
        now = time.monotonic()
        if self._checked_at is None or now - self._checked_at >= CHECK_EVERY:
            await store.check()  # raises Corrupt: the dashboard says so
            self._checked_at = now
        events = await store.events(limit=None, after_rowid=state.last_rowid)
        ids = list(dict.fromkeys(i for e in events if isinstance(e, Event) for i in e.record_ids))
        rows: list[Memory | CorruptRow] = await store.memories(ids)
        done = await store.done_sources()
        if done != state.done_sources:
            rowids = await store.done_source_rowids()
            named = set(ids)
            for row in await store.reinforced_by(sorted(rowids - state.done_source_rowids)):
                if row.id not in named and not same_stamp(state.find(row.id), row):
                    rows.append(row)
            state.saw_done_sources(done, rowids)  # only once read: a failed read is retried
        return Delta(tuple(events), tuple(rows), state.clock())


def same_stamp(current: Row | None, row: Row) -> bool:
    """True when the list already shows this version of the record."""
    if isinstance(current, Memory) and isinstance(row, Memory):
        return current.reinforced_at == row.reinforced_at and current.revision == row.revision
    return False
