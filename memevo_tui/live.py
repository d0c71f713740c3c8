"""The live change poller: what other connections (pi, the demo learner) committed.

No Textual here: the app runs ``poll`` in a worker every ``INTERVAL`` seconds
and hands what it returns to ``DashboardState.live_changed``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from store import CorruptRow, Event, Memory, MemoryLoad

from .state import DashboardState, EventRow, Row

INTERVAL = 0.2
"""Seconds between checks for commits by other connections."""
REREAD_WHOLE = 5_000
"""Stores up to this many rows are re-read whole on a change: that also catches
reinforcement stamps, which learning runs write without an event."""


@dataclass(frozen=True, slots=True)
class Delta:
    """What changed since the last poll."""

    events: tuple[EventRow, ...]
    rows: tuple[Row, ...]
    at: float
    full: MemoryLoad | None


class ChangePoller:
    """Cheap when nothing changed: one ``PRAGMA data_version``, nothing read.

    A change it failed to read is read again on a later poll (every ``RETRY``
    seconds), until it is read: no commit by another connection is ever skipped.
    """

    RETRY = 2.0

    def __init__(self, state: DashboardState) -> None:
        self.state = state
        self._retry_at: float | None = None

    async def poll(self) -> Delta | None:
        """The change since the last call, or None (raises ``StoreError``)."""
        store = self.state.store
        if store is None:
            return None
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
        events = await store.events(limit=None, after_rowid=state.last_rowid)
        ids = list(dict.fromkeys(i for e in events if isinstance(e, Event) for i in e.record_ids))
        full = None
        if len(state.rows) <= REREAD_WHOLE:
            full = await store.load_memories()
            wanted = set(ids)
            rows: list[Memory | CorruptRow] = [r for r in full.memories if r.id in wanted]
            rows += [r for r in full.corrupt if r.id in wanted]
        else:
            rows = await store.memories(ids)
        return Delta(tuple(events), tuple(rows), state.clock(), full)
