"""Reads of the store's past (the dial, the diff, ``--as-of``), and what every read shares."""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..base import StoreBase
from ..errors import NotInLog, corrupt
from ..js import parse_ms
from ..records.model import (
    CorruptRow,
    Memory,
    MemoryLoad,
    StoredMemory,
)
from ..records.rows import (
    memory_from_data,
    parse_memory_row,
)

if TYPE_CHECKING:  # the past and recall are imported when first asked for
    from ..past.events import Row
    from ..past.past import Past, PastLog

R = TypeVar("R", bound=Memory)

SLICE_SECONDS = 0.006
"""A loaded slice is parsed this long at a time, then the event loop runs: a key
pressed during a 100,000-record load waits at most this long for its turn."""


def safe_created_at(raw: Any) -> float | None:
    """A source row's ``createdAt`` in ms, or None when the row is unreadable."""
    try:
        data = json.loads(raw)
    except (TypeError, ValueError):
        return None
    created = data.get("createdAt") if isinstance(data, dict) else None
    return parse_ms(created) if isinstance(created, str) else None


class PastReads(StoreBase):
    """The store's past: each read as of a past moment goes through ``past/past.py``."""

    async def check(self) -> None:
        """SQLite's quick check of every page (about 0.15 s at 100,000 records).

        Raises ``Corrupt`` when the file is damaged; reads nothing else.
        """
        async with self._reading() as db:
            rows = list(await (await db.execute("PRAGMA quick_check(1)")).fetchall())
        verdict = str(rows[0][0]) if rows else "no answer"
        if verdict != "ok":  # SQLite's verdict may run over lines: one line, always
            said = " ".join(part.strip() for part in verdict.splitlines() if part.strip())
            raise corrupt(self.path, f"SQLite's quick check: {said}")

    async def past(self) -> Past | None:
        """The records as of ``as_of``, replayed from the event log (None: not set).
        A moment older than the log gives exactly raises ``NotInLog``."""
        if self.as_of is None:
            return None
        if self._past is None:
            self._past = await self.replay(self.as_of)
        past: Past = self._past
        return past

    async def replay(self, when: float, *, retime: bool = True) -> Past:
        """The records as they were at ``when`` (epoch ms), their quality as of then
        (``retime`` False: the records keep the moment they carry, for a reader that
        takes their quality at ``when`` itself):
        the current rows with every event newer than ``when`` undone (``PastLog``).

        The current rows and the newest event's rowid are read once per connection, in
        one transaction (so a commit by pi in between cannot misalign them); later
        moments reuse them and the walk's checkpoints. A moment at or after every event
        gives the current rows. Raises ``NotInLog`` for a moment older than the log
        gives exactly.
        """
        log, rows, upto = await self._replaying()
        past = await log.at(when, rows, upto, retime=retime)
        if past.clamped:
            raise NotInLog(past.refusal())
        return past

    async def stamps_after(self, boundary: int, ids: Collection[str]) -> dict[str, object]:
        """For each of ``ids`` that an event after rowid ``boundary`` names, the
        confirmation stamp the first such event wrote: what the stamp was at that event
        (one moment after ``boundary``'s, and before any confirmation since)."""
        log, _, _ = await self._replaying()
        return await log.stamps_after(boundary, ids)

    async def replay_pair(self, start: float, end: float) -> tuple[Past, Past]:
        """The records at ``start`` and at ``end`` that can differ between them
        (``PastLog.pair``): what ``past.diff`` compares. Raises ``NotInLog`` as
        ``replay`` does."""
        log, rows, upto = await self._replaying()
        pair = await log.pair((start, None), end, rows, upto)
        for past in pair:
            if past.clamped:
                raise NotInLog(past.refusal())
        return pair

    async def _replaying(self) -> tuple[PastLog, list[Row], int]:
        """The connection's replay: its log, the current rows and the newest event's
        rowid, read once (in one transaction) and kept."""
        from ..past.past import PastLog

        if self._replay is None:
            async with self._reading() as db:
                await db.execute("BEGIN")
                try:
                    rows = list(
                        await (
                            await db.execute(
                                "SELECT id, scope, hash, data FROM memories ORDER BY rowid"
                            )
                        ).fetchall()
                    )
                    top = await (await db.execute("SELECT max(rowid) FROM events")).fetchone()
                finally:
                    await db.execute("COMMIT")
            good: list[StoredMemory] = []
            bad: list[CorruptRow] = []
            self._parse_rows(parse_memory_row, rows, self.now_ms(), good, bad)
            upto = int(top[0] or 0) if top else 0
            self._replay = (
                PastLog(self, memory_from_data, keep=self.past_keep),
                [*bad, *good],
                upto,
            )
        replay: tuple[PastLog, list[Row], int] = self._replay
        return replay

    def past_note(self) -> str:
        """What the past read so far had to take on trust ("" for nothing): events dated
        out of the order they were written."""
        return self._replay[0].reorder_line() if self._replay else ""

    async def _past_load(self) -> MemoryLoad[StoredMemory] | None:
        past = await self.past()
        if past is None:
            return None
        return MemoryLoad(
            tuple(r for r in past.rows if isinstance(r, StoredMemory)),
            tuple(r for r in past.rows if isinstance(r, CorruptRow)),
        )

    @staticmethod
    def _parse_rows(
        parse: Callable[[str, str, str, str, float], R | CorruptRow],
        rows: Sequence[Any],
        now: float,
        good: list[R],
        bad: list[CorruptRow],
        start: int = 0,
        deadline: float | None = None,
    ) -> int:
        """Parse ``rows`` from ``start`` on, until the end or until ``perf_counter``
        passes ``deadline``; returns the index of the first row not parsed."""
        # A bulk parse creates only acyclic objects: pausing the cycle collector
        # saves it from rescanning a growing heap hundreds of times.
        collecting = gc.isenabled()
        gc.disable()
        try:
            end = len(rows)
            step = end if deadline is None else 50  # rows between looks at the clock
            i = start
            while i < end:
                for row_id, scope, hash_, raw in rows[i : i + step]:
                    parsed = parse(row_id, scope, hash_, raw, now)
                    if isinstance(parsed, CorruptRow):
                        bad.append(parsed)
                    else:
                        good.append(parsed)
                i += step
                if deadline is not None and time.perf_counter() >= deadline:
                    break
            return min(i, end)
        finally:
            if collecting:
                gc.enable()
