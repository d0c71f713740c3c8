"""Reads of the event log, the sources pi learned from and the learning queue's figures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import Refused
from ..js import js_json, parse_ms
from ..records.model import (
    CorruptRow,
    Event,
    Memory,
    ModelCall,
    Receipt,
    RouteHealth,
    Source,
)
from ..records.rows import (
    MODEL_CALL_COLUMNS,
    SOURCE_COLUMNS,
    parse_event_row,
    parse_model_call,
    parse_source_row,
)

if TYPE_CHECKING:  # the past and recall are imported when first asked for
    from ..pi.provenance import Provenance
from .records import RecordReads


class LogReads(RecordReads):
    """The event log, the sources and the learning figures."""

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
        from ..pi.provenance import named_sources, provenance

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
