"""Reads of the records: the whole list in slices, a snapshot, one record, search and recall."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import Refused
from ..js import fp, iso, js_json
from ..records import decode
from ..records.model import (
    CorruptRow,
    Memory,
    MemoryLoad,
    Snapshot,
    StoredMemory,
)
from ..records.rows import (
    parse_listed_row,
    parse_memory_row,
)

if TYPE_CHECKING:  # the past and recall are imported when first asked for
    from ..recall.recall import Purpose, Recall
from .past import SLICE_SECONDS, PastReads, R, safe_created_at


class RecordReads(PastReads):
    """The records: loaded in slices, one, many, searched, recalled."""

    async def load_memories(
        self,
        *,
        yield_every: int | None = None,
        after_slice: Callable[[], object] | None = None,
        between: Callable[[], Awaitable[object]] | None = None,
    ) -> MemoryLoad[Memory]:
        """Every memory row: valid ones typed, failing ones reported as corrupt.

        The records do not keep their stored objects (``load_stored`` does).

        Without ``yield_every`` the rows are read by one statement (one snapshot).
        With it, they are read and parsed that many at a time, by rowid, handing
        the connection and the event loop back between chunks: a UI stays
        responsive while 100,000 rows load, and the raw text of only one chunk is
        held at once. A commit by another process between two chunks may then be
        seen in part; the caller takes its change baseline (event rowid, data
        version) before the first chunk, so its live refresh re-reads what changed.
        pi keeps a record's rowid when it rewrites it (an upsert), so no row is read
        twice or skipped. ``after_slice`` is called once each slice is parsed (the
        dashboard freezes the cycle collector's view of what it holds there).

        Each slice is parsed ``SLICE_SECONDS`` at a time; ``between`` is awaited
        after each of those (default: one turn of the event loop).
        """
        if (past := await self._past_load()) is not None:
            return past  # a StoredMemory is a Memory
        if yield_every is None:
            return await self._load_all(parse_listed_row)
        now = self.now_ms()
        good: list[Memory] = []
        bad: list[CorruptRow] = []
        after = 0
        while True:
            async with self._reading() as db:
                rows = list(
                    await (
                        await db.execute(
                            "SELECT rowid, id, scope, hash, data FROM memories "
                            "WHERE rowid > ? ORDER BY rowid LIMIT ?",
                            (after, yield_every),
                        )
                    ).fetchall()
                )
            if not rows:
                break
            after = rows[-1][0]
            pending = [r[1:] for r in rows]
            del rows
            done = 0
            while done < len(pending):  # parsed a few milliseconds at a time
                deadline = time.perf_counter() + SLICE_SECONDS
                done = self._parse_rows(parse_listed_row, pending, now, good, bad, done, deadline)
                await (asyncio.sleep(0) if between is None else between())
            del pending
            if after_slice is not None:
                after_slice()
        decode.forget()
        return MemoryLoad(tuple(good), tuple(bad))

    async def load_stored(self) -> MemoryLoad[StoredMemory]:
        """Every memory row (one statement), the valid ones with their stored objects:
        for output that prints records as stored."""
        if (past := await self._past_load()) is not None:
            return past
        return await self._load_all(parse_memory_row)

    async def _load_all(
        self, parse: Callable[[str, str, str, str, float], R | CorruptRow]
    ) -> MemoryLoad[R]:
        async with self._reading() as db:
            rows = list(
                await (
                    await db.execute("SELECT id, scope, hash, data FROM memories ORDER BY rowid")
                ).fetchall()
            )
        good: list[R] = []
        bad: list[CorruptRow] = []
        self._parse_rows(parse, rows, self.now_ms(), good, bad)
        decode.forget()
        return MemoryLoad(tuple(good), tuple(bad))

    async def snapshot(self, *, events: bool = False, sources: bool = False) -> Snapshot:
        """Every memory row (and, when asked, every event and source row) as stored,
        read in one transaction so a commit by pi cannot land halfway through.

        As of a past moment, the memory rows are the records as they were (their stored
        objects from the event log) and the events those up to that moment; the source
        rows are as they are now (the log does not record them)."""
        past = await self.past()
        async with self._reading() as db:
            await db.execute("BEGIN")
            try:
                memories = await (
                    await db.execute("SELECT id, scope, hash, data FROM memories ORDER BY rowid")
                ).fetchall()
                event_rows: list[Any] = []
                if events:
                    event_rows = list(
                        await (
                            await db.execute(
                                "SELECT rowid, id, scope, data FROM events ORDER BY rowid"
                            )
                        ).fetchall()
                    )
                source_rows: list[dict[str, Any]] = []
                if sources:
                    async with db.execute("SELECT * FROM sources ORDER BY rowid") as cursor:
                        names = [d[0] for d in cursor.description]
                        source_rows = [
                            dict(zip(names, r, strict=True)) for r in await cursor.fetchall()
                        ]
                marker = await (
                    await db.execute("SELECT value FROM metadata WHERE key='schema'")
                ).fetchone()
            finally:
                await db.execute("COMMIT")
        memory_rows = [tuple(r) for r in memories]
        if past is not None:
            stored = {r[0]: r for r in memory_rows}  # a corrupt row is kept as it is now
            memory_rows = [
                (r.id, r.scope, fp(r.content), js_json(r.data))
                if isinstance(r, StoredMemory)
                else stored[r.id]
                for r in past.rows
            ]
            event_rows = [r for r in event_rows if r[0] <= past.boundary]
        return Snapshot(
            memories=tuple(memory_rows),
            events=tuple(tuple(r) for r in event_rows),
            sources=tuple(source_rows),
            schema=str(marker[0]) if marker else "?",
            now_ms=self.now_ms(),
        )

    async def recent_memories(self, limit: int) -> MemoryLoad[Memory]:
        """The ``limit`` most recently inserted rows: a cheap first screenful."""
        async with self._reading() as db:
            rows = await (
                await db.execute(
                    "SELECT id, scope, hash, data FROM memories ORDER BY rowid DESC LIMIT ?",
                    (limit,),
                )
            ).fetchall()
        good: list[Memory] = []
        bad: list[CorruptRow] = []
        self._parse_rows(parse_listed_row, list(rows), self.now_ms(), good, bad)
        return MemoryLoad(tuple(good), tuple(bad))

    async def memory_count(self) -> int:
        async with self._reading() as db:
            row = await (await db.execute("SELECT count(*) FROM memories")).fetchone()
        return int(row[0]) if row else 0

    async def origins(self) -> set[str]:
        """The origins (projects) the rows name, read from the ``scope`` column without
        parsing a row: a valid record's is its own; a corrupt row's, as stored."""
        async with self._reading() as db:
            rows = await (await db.execute("SELECT DISTINCT scope FROM memories")).fetchall()
        return {str(r[0]) for r in rows if isinstance(r[0], str)}

    async def memories(self, ids: Sequence[str]) -> list[Memory | CorruptRow]:
        """The current rows for these ids (missing ids are left out)."""
        return await self._rows_of(ids, parse_listed_row)

    async def stored_memories(self, ids: Sequence[str]) -> list[StoredMemory | CorruptRow]:
        """The current rows for these ids with their stored objects, read in one
        transaction (missing ids are left out): what a few records printed as stored
        need, after a load that kept none."""
        return await self._rows_of(ids, parse_memory_row)

    async def _rows_of(
        self, ids: Sequence[str], parse: Callable[[str, str, str, str, float], R | CorruptRow]
    ) -> list[R | CorruptRow]:
        out: list[R | CorruptRow] = []
        now = self.now_ms()
        async with self._reading() as db:
            await db.execute("BEGIN")
            try:
                for memory_id in ids:
                    row = await (
                        await db.execute(
                            "SELECT id, scope, hash, data FROM memories WHERE id=?", (memory_id,)
                        )
                    ).fetchone()
                    if row is not None:
                        out.append(parse(row[0], row[1], row[2], row[3], now))
            finally:
                await db.execute("COMMIT")
        return out

    async def done_sources(self) -> tuple[int, int]:
        """How many sources are done, and the sum of their rowids: it changes whenever the
        set of done sources does (the sources_recovery index answers; no row is read)."""
        async with self._reading() as db:
            row = await (
                await db.execute("SELECT count(*), total(rowid) FROM sources WHERE state='done'")
            ).fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    async def done_source_rowids(self) -> frozenset[int]:
        """The rowids of the done sources (from the index alone)."""
        async with self._reading() as db:
            rows = await (
                await db.execute("SELECT rowid FROM sources WHERE state='done'")
            ).fetchall()
        return frozenset(int(r[0]) for r in rows)

    async def reinforced_by(self, source_rowids: Sequence[int]) -> list[Memory | CorruptRow]:
        """The records carrying these sources' confirmation stamps (§5.6).

        A learning run that finishes stamps ``reinforcedAt`` with its source's
        ``createdAt`` and writes no event, so this is how a reader learns which
        records it confirmed: one pass over the stored text, in SQLite, for the
        stamps' exact JSON (the writer's own serialisation), then only the rows
        that hold one are parsed.
        """
        if not source_rowids:
            return []
        stamps: list[str] = []
        async with self._reading() as db:
            for rowid in source_rowids:
                row = await (
                    await db.execute("SELECT data FROM sources WHERE rowid=?", (rowid,))
                ).fetchone()
                created = safe_created_at(row[0]) if row else None
                if created is not None:
                    stamps.append(f'"reinforcedAt":{js_json(iso(created))}')
            rows: dict[str, Any] = {}
            for start in range(0, len(stamps), 200):  # well under SQLite's parameter limit
                chunk = stamps[start : start + 200]
                where = " OR ".join("instr(data, ?) > 0" for _ in chunk)
                query = f"SELECT id, scope, hash, data FROM memories WHERE {where}"
                for r in await (await db.execute(query, chunk)).fetchall():
                    rows[r[0]] = r
        now = self.now_ms()
        return [parse_listed_row(r[0], r[1], r[2], r[3], now) for r in rows.values()]

    async def search(self, query: str, limit: int = 10) -> list[Memory]:
        """Explicit search, as ``/memory search``: dormant records included, in pi's order."""
        return (await self.recall(query, purpose="search", limit=limit)).memories

    async def recall(
        self,
        prompt: str,
        *,
        purpose: Purpose = "search",
        limit: int | None = None,
        recent_user_turns: Sequence[str] = (),
    ) -> Recall:
        """The whole recall pipeline over the current records, every decision kept (§6)."""
        from ..recall.index import RecallIndex  # numpy, imported only when a recall is asked for

        load = await self.load_memories()
        return RecallIndex(load.memories).recall(
            prompt, purpose=purpose, limit=limit, recent_user_turns=recent_user_turns
        )

    async def memory(self, memory_id: str) -> StoredMemory:
        past = await self.past()
        if past is not None:
            for r in past.rows:
                if r.id == memory_id and isinstance(r, StoredMemory):
                    return r
                if r.id == memory_id and isinstance(r, CorruptRow):
                    raise Refused(f"Invalid memory record ({r.reason})")
            raise Refused(f"Unknown memory id: none existed as of {iso(past.when)}")
        async with self._reading() as db:
            row = await (
                await db.execute(
                    "SELECT id, scope, hash, data FROM memories WHERE id=?", (memory_id,)
                )
            ).fetchone()
        if row is None:
            raise Refused("Unknown memory id")
        parsed = parse_memory_row(row[0], row[1], row[2], row[3], self.now_ms())
        if isinstance(parsed, CorruptRow):
            raise Refused(f"Invalid memory record ({parsed.reason})")
        return parsed
