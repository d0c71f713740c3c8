"""The store's one connection, opened once, and the read of every row: a big store's
first screenful first, read while the dashboard is still being built. No Textual here."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Awaitable, Callable
from pathlib import Path

from store import Clock, Memory, MemoryLoad, MemoryStore, StoreError

from ...term.compat import loop_has_ready

FirstPage = Callable[[MemoryLoad[Memory], int], Awaitable[None]]

FIRST_PAGE_THRESHOLD = 5_000
"""Above this many rows, a first screenful is shown before the rest is parsed."""
FIRST_PAGE = 400

FirstRead = tuple[MemoryLoad[Memory] | None, int]
"""A big store's first screenful (None for a small store) and its row count."""


async def idle() -> None:
    """Return once the event loop has nothing else ready to run (at most 50 turns).

    A load parses a few milliseconds at a time and awaits this in between: a key's
    handling takes several turns of the loop (the key, its binding, the messages it
    posts, the redraw), and each would otherwise wait behind another slice.
    """
    loop = asyncio.get_running_loop()
    for _ in range(50):
        await asyncio.sleep(0)
        if not loop_has_ready(loop):
            return


DoneSources = Callable[[tuple[int, int], frozenset[int]], None]


class StoreReader:
    """The open store and its reads (``DashboardState.reader``)."""

    def __init__(
        self,
        db_path: Path,
        *,
        read_only: bool,
        clock: Clock,
        new_id: Callable[[], str] | None,
        keep_past: bool = False,
    ) -> None:
        self.db_path = db_path
        self.keep_past = keep_past
        """A walk of the whole event log is kept in the cache directory (not the demo's)."""
        self.read_only_requested = read_only
        self.clock = clock
        self.new_id = new_id
        self.store: MemoryStore | None = None
        self._opening = asyncio.Lock()  # one open at a time: two would leak a connection
        self._first: asyncio.Task[FirstRead] | None = None  # see prefetch()
        self._read_begun = False  # a prefetch after the first read has nothing to do

    async def open(self) -> MemoryStore:
        """The open store, opening it on first use (raises ``StoreError``)."""
        async with self._opening:
            if self.store is None:
                self.store = await MemoryStore.open(
                    self.db_path,
                    read_only=self.read_only_requested,
                    clock=self.clock,
                    new_id=self.new_id,
                )
                if self.keep_past:
                    from ..recallcache import keeping_past

                    keeping_past(self.store, self.db_path)
            return self.store

    async def prefetch(self) -> None:
        """Open the store and read its first screenful while the dashboard is still being
        built; the first ``read`` takes that over. Its failure is ``read``'s to report."""
        if self._read_begun:
            return
        if self._first is None:
            self._first = asyncio.ensure_future(self._first_read())
        with contextlib.suppress(StoreError):
            await asyncio.shield(self._first)

    async def _first_read(self) -> FirstRead:
        store = await self.open()
        total = await store.memory_count()
        if total <= FIRST_PAGE_THRESHOLD:
            return None, total
        return await store.recent_memories(FIRST_PAGE), total

    async def read(
        self, first_page: FirstPage, saw_done_sources: DoneSources
    ) -> tuple[MemoryLoad[Memory], int]:
        """Read every row; returns them and the newest event's rowid (raises ``StoreError``).

        A big store hands a first screenful (and the total) to ``first_page``, which
        returns once it is on screen, before the rest is parsed. The sources done before
        the rows are read go to ``saw_done_sources`` (see ``live``).
        """
        self._read_begun = True
        task, self._first = self._first, None
        if task is None and self.store is not None and self.store.file_problem() is not None:
            await self.close()  # replaced or deleted on disk: open what is there now
        page, total = await (task if task is not None else self._first_read())
        store = await self.open()
        if page is not None:
            await first_page(page, total)
        last_rowid = await store.last_event_rowid()
        saw_done_sources(await store.done_sources(), await store.done_source_rowids())
        await store.changed()  # the change signal's baseline is this read
        # Each parsed slice is moved out of the cycle collector's sight at once, as the
        # whole load is once it ends: the collections that run between slices would
        # otherwise scan every record parsed so far (0.3 s of a 100,000-record load).
        load = await store.load_memories(yield_every=2_000, after_slice=gc.freeze, between=idle)
        return load, last_rowid

    async def close(self) -> None:
        task, self._first = self._first, None
        if task is not None:  # let a prefetch end first, or it opens the store again
            await asyncio.gather(task, return_exceptions=True)
        store, self.store = self.store, None
        if store is not None:
            await store.close()
