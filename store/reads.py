"""Validated reads: typed records, events, sources and figures; failing rows come back
as ``CorruptRow`` and never stop the others (§2.2)."""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .base import StoreBase
from .errors import NotInLog, Refused, corrupt
from .js import fp, iso, js_json, parse_ms
from .records import decode
from .records.model import (
    CorruptRow,
    Event,
    Memory,
    MemoryLoad,
    ModelCall,
    Receipt,
    RouteHealth,
    Snapshot,
    Source,
    StoredMemory,
)
from .records.rows import (
    MODEL_CALL_COLUMNS,
    SOURCE_COLUMNS,
    memory_from_data,
    parse_event_row,
    parse_listed_row,
    parse_memory_row,
    parse_model_call,
    parse_source_row,
)

if TYPE_CHECKING:  # the past and recall are imported when first asked for
    from .past.past import Past, PastLog, Row
    from .pi.provenance import Provenance
    from .recall.recall import Purpose, Recall

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


class Reads(StoreBase):
    """Everything the store reads."""

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
        from .past.past import PastLog

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
        from .recall.index import RecallIndex  # numpy, imported only when a recall is asked for

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

    async def events(
        self,
        *,
        memory_id: str | None = None,
        scope: str | None = None,
        limit: int | None = 50,
        before_rowid: int | None = None,
        after_rowid: int | None = None,
    ) -> list[Event | CorruptRow]:
        """Events newest first; optionally only those touching one record or one scope,
        older than ``before_rowid`` or newer than ``after_rowid``."""
        where: list[str] = []
        args: list[Any] = []
        if scope is not None:
            where.append("scope=?")
            args.append(scope)
        if before_rowid is not None:
            where.append("rowid<?")
            args.append(before_rowid)
        if after_rowid is not None:
            where.append("rowid>?")
            args.append(after_rowid)
        if (past := await self.past()) is not None:
            where.append("rowid<=?")  # as of a past moment: the events up to it
            args.append(past.boundary)
        if memory_id is not None:
            where.append("instr(data, ?) > 0")
            args.append(js_json(memory_id))
        sql = "SELECT rowid, id, scope, data FROM events"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY rowid DESC"
        if limit is not None and memory_id is None:
            sql += " LIMIT ?"
            args.append(limit)
        async with self._reading() as db:
            rows = await (await db.execute(sql, args)).fetchall()
        out: list[Event | CorruptRow] = []
        for rowid, eid, escope, raw in rows:
            parsed = parse_event_row(rowid, eid, escope, raw)
            if (
                memory_id is not None
                and isinstance(parsed, Event)
                and memory_id not in parsed.record_ids
            ):
                continue
            out.append(parsed)
            if limit is not None and len(out) >= limit:
                break
        return out

    async def event(self, event_id: str) -> Event:
        async with self._reading() as db:
            row = await (
                await db.execute(
                    "SELECT rowid, id, scope, data FROM events WHERE id=?", (event_id,)
                )
            ).fetchone()
        if row is None:
            raise Refused("Unknown event id")
        parsed = parse_event_row(row[0], row[1], row[2], row[3])
        if isinstance(parsed, CorruptRow):
            raise Refused(f"Invalid history record ({parsed.reason})")
        return parsed

    async def source_events(self, source_id: str) -> list[Event | CorruptRow]:
        """The capture and learning-run events of one source, newest first."""
        async with self._reading() as db:
            rows = await (
                await db.execute(
                    "SELECT rowid, id, scope, data FROM events WHERE instr(data, ?) > 0 "
                    "ORDER BY rowid DESC",
                    (source_id,),
                )
            ).fetchall()
        out: list[Event | CorruptRow] = []
        for rowid, eid, scope, raw in rows:
            parsed = parse_event_row(rowid, eid, scope, raw)
            if isinstance(parsed, Event) and not (
                parsed.reason == f"Capture {source_id}"
                or parsed.reason.endswith(f": {source_id}")
                or f": {source_id}; " in parsed.reason
            ):
                continue
            out.append(parsed)
        return out

    async def conflict_pairs(self) -> list[tuple[str, str]]:
        """The records each ``conflict`` event quarantined together (§4.7), oldest first.

        An event row that is not JSON is passed over, as every read passes over a
        corrupt row (``json_extract`` alone would fail the whole query on it)."""
        async with self._reading() as db:
            rows = await (
                await db.execute(
                    "SELECT rowid, id, scope, data FROM events WHERE CASE WHEN json_valid(data) "
                    "THEN json_extract(data, '$.reason') END = 'conflict' ORDER BY rowid"
                )
            ).fetchall()
        pairs = []
        for rowid, eid, scope, raw in rows:
            event = parse_event_row(rowid, eid, scope, raw)
            if isinstance(event, Event) and len(event.record_ids) == 2:
                pairs.append((event.record_ids[0], event.record_ids[1]))
        return pairs

    async def last_event_rowid(self) -> int:
        async with self._reading() as db:
            row = await (await db.execute("SELECT max(rowid) FROM events")).fetchone()
        return int(row[0] or 0) if row else 0

    async def reflecting(
        self, rows: Sequence[Memory | CorruptRow], seen: int
    ) -> tuple[list[Memory | CorruptRow], int]:
        """``rows`` (a reader's, which reflect the events up to rowid ``seen``) brought up
        to the newest event, for ``PastLog.at`` to walk back from: the records the later
        events name, read as they are now, in place or added. Returns them and the
        rowid of the event they now reflect. ``rows`` is not changed."""
        top = await self.last_event_rowid()
        if top <= seen:
            return list(rows), seen
        named = dict.fromkeys(
            i
            for e in await self.events(limit=None, after_rowid=seen)
            if isinstance(e, Event)
            for i in e.record_ids
        )
        fresh: dict[str, Memory | CorruptRow] = {r.id: r for r in await self.memories(list(named))}
        present = [fresh.pop(r.id, r) for r in rows]
        present.extend(fresh.values())
        return present, top

    async def newest_event_ms(self) -> float | None:
        """The latest moment any readable event names (epoch ms; None: none does). The
        past before it is settled: an event written later is taken at or after it."""
        from .js import parse_ms

        async with self._reading() as db:
            sql = "SELECT json_extract(data, '$.at') FROM events WHERE json_valid(data)"
            rows = await (await db.execute(sql)).fetchall()
        moments = [m for (at,) in rows if (m := parse_ms(at)) is not None]
        return max(moments, default=None)

    async def event_count(self) -> int:
        async with self._reading() as db:
            row = await (await db.execute("SELECT count(*) FROM events")).fetchone()
        return int(row[0]) if row else 0

    async def sources(self, *, limit: int | None = None) -> list[Source | CorruptRow]:
        """Learning-queue sources, newest first."""
        sql = f"SELECT {SOURCE_COLUMNS} FROM sources ORDER BY rowid DESC"
        args: tuple[Any, ...] = ()
        if limit is not None:
            sql += " LIMIT ?"
            args = (limit,)
        async with self._reading() as db:
            rows = await (await db.execute(sql, args)).fetchall()
        p = self.policy
        return [parse_source_row(tuple(r), p.source_calls, p.source_time_ms) for r in rows]

    async def sources_named(self, ids: Sequence[str]) -> dict[str, Source | CorruptRow]:
        """The source rows with these ids (those that exist), by id."""
        found: dict[str, Source | CorruptRow] = {}
        p = self.policy
        for i in range(0, len(ids), 500):
            chunk = list(ids[i : i + 500])
            marks = ",".join("?" * len(chunk))
            async with self._reading() as db:
                rows = await (
                    await db.execute(
                        f"SELECT {SOURCE_COLUMNS} FROM sources WHERE id IN ({marks})", chunk
                    )
                ).fetchall()
            for r in rows:
                parsed = parse_source_row(tuple(r), p.source_calls, p.source_time_ms)
                found[parsed.id] = parsed
        return found

    async def provenance(self, memory_id: str) -> Provenance:
        """Where the record came from (``provenance.py``): every source that shaped it,
        each with the passage of its text that states the claim, and the manual changes.
        Raises ``Refused`` when no such record exists."""
        from .pi.provenance import named_sources, provenance

        record = await self.memory(memory_id)
        events = await self.events(memory_id=record.id, limit=None)
        rows = await self.sources_named(named_sources(record, events))
        return provenance(record, events, rows)

    async def model_calls(self, source_id: str | None = None) -> list[ModelCall]:
        sql = f"SELECT {MODEL_CALL_COLUMNS} FROM model_calls"
        args: tuple[Any, ...] = ()
        if source_id is not None:
            sql += " WHERE source_id=?"
            args = (source_id,)
        sql += " ORDER BY at DESC, rowid DESC"
        async with self._reading() as db:
            rows = await (await db.execute(sql, args)).fetchall()
        return [parse_model_call(tuple(r)) for r in rows]

    async def receipts(self, memory_id: str | None = None) -> list[Receipt]:
        sql = "SELECT source_id, memory_id, verdict, at FROM feedback_receipts"
        args: tuple[Any, ...] = ()
        if memory_id is not None:
            sql += " WHERE memory_id=?"
            args = (memory_id,)
        sql += " ORDER BY at DESC"
        async with self._reading() as db:
            rows = await (await db.execute(sql, args)).fetchall()
        return [Receipt(*r) for r in rows]

    async def route_health(self) -> list[RouteHealth]:
        async with self._reading() as db:
            rows = await (
                await db.execute("SELECT id, until, code FROM route_health ORDER BY until")
            ).fetchall()
        return [RouteHealth(*r) for r in rows]

    async def metadata(self) -> dict[str, str]:
        async with self._reading() as db:
            rows = await (await db.execute("SELECT key, value FROM metadata")).fetchall()
        return {str(k): str(v) for k, v in rows}

    async def blocked_count(self) -> int:
        async with self._reading() as db:
            row = await (await db.execute("SELECT count(*) FROM blocked")).fetchone()
        return int(row[0]) if row else 0
