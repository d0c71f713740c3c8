"""The walks into the past that the dial, the Timeline and the diff share: one
``store.PastLog`` per open store (its checkpoints reused by each), walking back from
the dashboard's rows brought up to the newest event (``MemoryStore.reflecting``), the
same path as ``--as-of``. No Textual here."""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from store import MemoryStore, NotInLog

from .changes import Row

if TYPE_CHECKING:  # the past and the Timeline are imported when first used
    from store import Diff, PastLog, Standing


LONG_WALK = 10_000
"""Events undone by one walk past which the heap is settled (``settle``)."""


def settle(undone: int) -> None:
    """After a long walk, keep the cycle collector from rescanning what it kept.

    A walk of the whole log keeps every version of every record (300,000 at 300,000
    events), for as long as the store is open. Each full collection would scan them
    all again, a pause of a third of a second in the middle of a later move. So, as
    the dashboard does once its rows are loaded, collect once and freeze what is left
    (``gc.freeze``): frozen records are still freed when nothing holds them."""
    if undone >= LONG_WALK:
        gc.collect()
        gc.freeze()


class PastWalks:
    """The event log's replay for one open store."""

    def __init__(self) -> None:
        self._log: PastLog | None = None

    async def walk(
        self, store: MemoryStore, rows: Sequence[Row], seen: int
    ) -> tuple[PastLog, list[Row], int]:
        """The replay, the present rows it walks back from, and the newest event they
        reflect.

        The rows must reflect exactly the events up to that one. The dashboard's
        already hold a write of its own whose event the live poller has not read yet (it
        reads none while paused), and may lack what pi wrote since: so the records the
        events after ``seen`` name are read as they are now, for the walk only. The rows
        shown do not change."""
        from store import PastLog

        if self._log is None or self._log.store is not store:
            # The walk of the whole log is kept where the store says (not for the demo).
            self._log = PastLog(store, after_walk=settle, keep=store.past_keep)
        present, top = await store.reflecting(rows, seen)
        return self._log, present, top

    async def standing(
        self,
        store: MemoryStore,
        rows: Sequence[Row],
        seen: int,
        moments: Sequence[float],
        each: Callable[[Standing], None] | None,
        project: str,
    ) -> list[Standing]:
        """How many records of ``project`` were in each state at each of ``moments``."""
        from store import timeline

        log, present, top = await self.walk(store, rows, seen)
        return await timeline.standing(log, present, top, moments, each, project)

    async def diff(
        self,
        store: MemoryStore,
        rows: Sequence[Row],
        seen: int,
        start: tuple[float, int | None],
        end: float,
    ) -> Diff:
        """The records added, changed and removed between ``start`` (a moment, and
        optionally the event just after which it starts) and ``end``. Raises
        ``NotInLog`` for a moment older than the log gives exactly."""
        from store import diff

        log, present, top = await self.walk(store, rows, seen)
        ends = await log.pair(start, end, present, top)
        for past in ends:
            if past.clamped:
                raise NotInLog(past.refusal())
        return diff(*ends)
