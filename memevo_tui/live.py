"""The live change poller: what other connections (pi, the demo learner) committed.

No Textual here: the app runs ``poll`` in a worker every ``INTERVAL`` seconds
and hands what it returns to ``DashboardState.live_changed``.
"""

from __future__ import annotations

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
    """Cheap when nothing changed: one ``PRAGMA data_version``, nothing read."""

    def __init__(self, state: DashboardState) -> None:
        self.state = state

    async def poll(self) -> Delta | None:
        """The change since the last call, or None (raises ``StoreError``)."""
        state = self.state
        store = state.store
        if store is None or not await store.changed():
            return None
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
