"""The async memory store: opening, reading and the manual write operations.

Everything here follows ../shared/spec/STORE.md; section numbers refer to it.
One aiosqlite connection per store; every write is one ``BEGIN IMMEDIATE``
transaction; an asyncio lock keeps this process's own calls from interleaving.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sqlite3
import stat
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiosqlite

from ._js import fp, iso, js_json, js_len, js_trim, parse_ms, union
from .clock import Clock, system_clock
from .errors import (
    Busy,
    CannotOpen,
    Changed,
    MissingStore,
    ReadOnly,
    Refused,
    StoreError,
    UnsupportedSchema,
)
from .extract import extract
from .model import (
    VERDICTS,
    CorruptRow,
    Event,
    Memory,
    MemoryLoad,
    ModelCall,
    Receipt,
    RouteHealth,
    Source,
)
from .recall import Purpose, Recall, RecallIndex
from .redact import redact
from .rows import (
    MODEL_CALL_COLUMNS,
    SOURCE_COLUMNS,
    parse_event_row,
    parse_memory_row,
    parse_model_call,
    parse_source_row,
)
from .validate import record_problem, valid_identifier

SUPPORTED_SCHEMAS = ("2", "3", "4", "5", "6", "7")
WRITABLE_SCHEMA = "7"
BUSY_TIMEOUT_MS = 5000
REQUIRED_TABLES = ("metadata", "memories", "events", "sources", "blocked")

IdFactory = Callable[[], str]


def _uuid4() -> str:
    return str(uuid.uuid4())


def _without(record: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != key}


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def check_store_file(path: Path) -> os.stat_result:
    """The opening rules of 1.2 step 4 (regular file, never a symlink), plus readability.

    Raises ``MissingStore`` or ``CannotOpen`` with a one-line reason; touches nothing.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise MissingStore(f"No memory store at {path}") from None
    except OSError as exc:
        raise CannotOpen(f"Cannot read {path}: {exc.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        raise CannotOpen(f"{path} is a symbolic link; the memory database must be a regular file")
    if stat.S_ISDIR(st.st_mode):
        raise CannotOpen(f"{path} is a directory, not a memory database")
    if not stat.S_ISREG(st.st_mode):
        raise CannotOpen(f"{path} is not a regular file; the memory database must be one")
    if not os.access(path, os.R_OK):
        raise CannotOpen(f"Cannot read {path}: permission denied")
    return st


class MemoryStore:
    """pi-memory-evolution's store, read and written as upstream does."""

    def __init__(
        self,
        db: aiosqlite.Connection,
        path: Path,
        *,
        read_only: bool,
        read_only_reason: str,
        schema: str,
        clock: Clock,
        new_id: IdFactory,
    ) -> None:
        self._db = db
        self.path = path
        self.read_only = read_only
        self.read_only_reason = read_only_reason
        self.schema = schema
        self.clock = clock
        self._new_id = new_id
        self._lock = asyncio.Lock()
        self._data_version: int | None = None

    # ------------------------------------------------------------------ opening

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        clock: Clock = system_clock,
        new_id: IdFactory | None = None,
    ) -> MemoryStore:
        """Open an existing store (§1.2) without creating, migrating or importing anything.

        Falls back to read-only when the file or its directory is not writable.
        Raises ``CannotOpen`` (or ``UnsupportedSchema``) with a one-line reason.
        """
        p = Path(path)
        st = check_store_file(p)
        reason = "opened with --read-only" if read_only else ""
        if not read_only:
            if not (st.st_mode & stat.S_IWUSR) or not os.access(p, os.W_OK):
                read_only, reason = True, "the file is not writable"
            elif not os.access(p.parent, os.W_OK | os.X_OK):
                read_only, reason = True, "its directory is not writable"

        schema = await cls._check_schema(p)
        if not read_only and schema != WRITABLE_SCHEMA:
            read_only = True
            reason = f"schema {schema} needs migration: open it in pi first to write to it"
        db = await cls._connect(p, read_only=read_only)
        try:
            if not read_only:
                mode = (await (await db.execute("PRAGMA journal_mode")).fetchone() or ("",))[0]
                if str(mode).lower() != "wal":
                    await db.execute("PRAGMA journal_mode=WAL")
                await db.execute("PRAGMA synchronous=FULL")
                if st.st_mode & 0o077:
                    os.chmod(p, 0o600)
        except BaseException:
            await db.close()
            raise
        return cls(
            db,
            p,
            read_only=read_only,
            read_only_reason=reason,
            schema=schema,
            clock=clock,
            new_id=new_id or _uuid4,
        )

    @staticmethod
    async def _connect(path: Path, *, read_only: bool) -> aiosqlite.Connection:
        mode = "ro" if read_only else "rw"
        uri = f"file:{quote(str(path.resolve()))}?mode={mode}"
        try:
            db = await aiosqlite.connect(uri, uri=True, isolation_level=None)
        except sqlite3.Error as exc:
            raise CannotOpen(f"Cannot open {path}: {exc}") from None
        try:
            await db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        except BaseException:
            await db.close()
            raise
        return db

    @classmethod
    async def _check_schema(cls, path: Path) -> str:
        """The version gate of §1.2 step 7, on a read-only connection: nothing is written."""
        db = await cls._connect(path, read_only=True)
        try:
            try:
                rows = await (
                    await db.execute("SELECT name FROM sqlite_master WHERE type='table'")
                ).fetchall()
            except sqlite3.DatabaseError as exc:
                raise CannotOpen(f"{path} is not an SQLite memory store ({exc})") from None
            tables = {r[0] for r in rows}
            missing = [t for t in REQUIRED_TABLES if t not in tables]
            if missing:
                raise CannotOpen(f"{path} is not a pi memory store (no {', '.join(missing)} table)")
            row = await (
                await db.execute("SELECT value FROM metadata WHERE key='schema'")
            ).fetchone()
            if row is None:
                raise CannotOpen(f"{path} has no schema marker: open it in pi first")
            version = str(row[0])
            if version not in SUPPORTED_SCHEMAS:
                raise UnsupportedSchema(version)
            return version
        finally:
            await db.close()

    async def close(self) -> None:
        await self._db.close()

    async def __aenter__(self) -> MemoryStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------ plumbing

    def now_ms(self) -> float:
        return self.clock()

    def now_iso(self) -> str:
        return iso(self.clock())

    @asynccontextmanager
    async def _reading(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._lock:
            yield self._db

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: all of it commits, or none of it."""
        if self.read_only:
            raise ReadOnly(f"The store is read-only ({self.read_only_reason})")
        async with self._lock:
            try:
                await self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if _is_busy(exc):
                    raise Busy(
                        "The memory store is busy (another writer held it for over 5 s); try again"
                    ) from None
                raise
            try:
                yield self._db
                await self._db.execute("COMMIT")
            except BaseException as exc:
                await self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError) and _is_busy(exc):
                    raise Busy("The memory store is busy; nothing was written") from None
                raise

    async def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one read-only query and return its rows (for reports built on the store)."""
        async with self._reading() as db:
            rows = await (await db.execute(sql, tuple(args))).fetchall()
        return [tuple(r) for r in rows]

    async def data_version(self) -> int:
        """``PRAGMA data_version``: changes when another connection commits."""
        async with self._reading() as db:
            row = await (await db.execute("PRAGMA data_version")).fetchone()
        return int(row[0]) if row else 0

    async def changed(self) -> bool:
        """True when another connection committed since the last call (cheap; reads nothing)."""
        version = await self.data_version()
        previous, self._data_version = self._data_version, version
        return previous is not None and previous != version

    # ------------------------------------------------------------ reading

    async def load_memories(self, *, yield_every: int | None = None) -> MemoryLoad:
        """Every memory row: valid ones typed, failing ones reported as corrupt.

        With ``yield_every``, the parse hands control back to the event loop
        every that many rows, so a UI stays responsive while 100,000 rows load.
        """
        async with self._reading() as db:
            rows = list(
                await (
                    await db.execute("SELECT id, scope, hash, data FROM memories ORDER BY rowid")
                ).fetchall()
            )
        now = self.now_ms()
        good: list[Memory] = []
        bad: list[CorruptRow] = []
        step = yield_every or len(rows) or 1
        for start in range(0, len(rows), step):
            self._parse_rows(rows[start : start + step], now, good, bad)
            if yield_every:
                await asyncio.sleep(0)
        return MemoryLoad(tuple(good), tuple(bad))

    @staticmethod
    def _parse_rows(
        rows: Sequence[Any], now: float, good: list[Memory], bad: list[CorruptRow]
    ) -> None:
        # A bulk parse creates only acyclic objects: pausing the cycle collector
        # saves it from rescanning a growing heap hundreds of times.
        collecting = gc.isenabled()
        gc.disable()
        try:
            for row_id, scope, hash_, raw in rows:
                parsed = parse_memory_row(row_id, scope, hash_, raw, now)
                if isinstance(parsed, Memory):
                    good.append(parsed)
                else:
                    bad.append(parsed)
        finally:
            if collecting:
                gc.enable()

    async def recent_memories(self, limit: int) -> MemoryLoad:
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
        self._parse_rows(list(rows), self.now_ms(), good, bad)
        return MemoryLoad(tuple(good), tuple(bad))

    async def memory_count(self) -> int:
        async with self._reading() as db:
            row = await (await db.execute("SELECT count(*) FROM memories")).fetchone()
        return int(row[0]) if row else 0

    async def memories(self, ids: Sequence[str]) -> list[Memory | CorruptRow]:
        """The current rows for these ids (missing ids are left out)."""
        out: list[Memory | CorruptRow] = []
        now = self.now_ms()
        async with self._reading() as db:
            for memory_id in ids:
                row = await (
                    await db.execute(
                        "SELECT id, scope, hash, data FROM memories WHERE id=?", (memory_id,)
                    )
                ).fetchone()
                if row is not None:
                    out.append(parse_memory_row(row[0], row[1], row[2], row[3], now))
        return out

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
        load = await self.load_memories()
        return RecallIndex(load.memories).recall(
            prompt, purpose=purpose, limit=limit, recent_user_turns=recent_user_turns
        )

    async def memory(self, memory_id: str) -> Memory:
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

    async def last_event_rowid(self) -> int:
        async with self._reading() as db:
            row = await (await db.execute("SELECT max(rowid) FROM events")).fetchone()
        return int(row[0] or 0) if row else 0

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
        return [parse_source_row(tuple(r)) for r in rows]

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

    # ------------------------------------------------- transaction helpers

    async def _load(self, db: aiosqlite.Connection, memory_id: str) -> dict[str, Any] | None:
        row = await (
            await db.execute("SELECT id, scope, hash, data FROM memories WHERE id=?", (memory_id,))
        ).fetchone()
        if row is None:
            return None
        parsed = parse_memory_row(row[0], row[1], row[2], row[3], self.now_ms())
        if isinstance(parsed, CorruptRow):
            raise Refused(f"Invalid memory record ({parsed.reason})")
        return dict(parsed.data)

    async def _require(
        self, db: aiosqlite.Connection, memory_id: str, expected_revision: int | None
    ) -> dict[str, Any]:
        record = await self._load(db, memory_id)
        if record is None:
            raise Refused("Unknown memory id")
        if expected_revision is not None and record["revision"] != expected_revision:
            raise Changed(
                f"Memory changed since you loaded it (revision {expected_revision}, "
                f"now {record['revision']}); nothing was written"
            )
        return record

    async def _same_hash(
        self, db: aiosqlite.Connection, record: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """Other records of the record's scope with its content fingerprint."""
        rows = await (
            await db.execute(
                "SELECT id, scope, hash, data FROM memories WHERE scope=? AND hash=?",
                (record["scope"], fp(record["content"])),
            )
        ).fetchall()
        out = []
        now = self.now_ms()
        for row in rows:
            if row[0] == record["id"]:
                continue
            parsed = parse_memory_row(row[0], row[1], row[2], row[3], now)
            if isinstance(parsed, CorruptRow):
                raise Refused(f"Invalid memory record ({parsed.reason})")
            out.append(dict(parsed.data))
        return out

    async def write(
        self,
        db: aiosqlite.Connection,
        actor: str,
        reason: str,
        after: list[dict[str, Any]],
        scope: str,
    ) -> str:
        """The common writer (§4.1). Call inside ``transaction()``."""
        before: list[dict[str, Any] | None] = []
        for record in after:
            old = await self._load(db, record["id"])
            if old is not None and "reinforcedAt" in old:
                old_ms = parse_ms(old["reinforcedAt"]) or 0.0
                new_ms = parse_ms(record.get("reinforcedAt"))
                if new_ms is None or old_ms > new_ms:
                    record["reinforcedAt"] = old["reinforcedAt"]
            before.append(old)
        at = self.now_iso()
        event_id = self._new_id()
        for record in after:
            if record_problem(record) is not None:
                raise Refused("Invalid memory update")
            await db.execute(
                "INSERT INTO memories VALUES (?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
                "scope=excluded.scope, hash=excluded.hash, data=excluded.data",
                (record["id"], record["scope"], fp(record["content"]), js_json(record)),
            )
            for h in record.get("suppressedHashes") or ():
                await db.execute("INSERT OR IGNORE INTO blocked VALUES (?,?)", (record["scope"], h))
        event = {
            "id": event_id,
            "at": at,
            "actor": actor,
            "reason": reason,
            "scope": scope,
            "before": before,
            "after": after,
        }
        await db.execute("INSERT INTO events VALUES (?,?,?)", (event_id, scope, js_json(event)))
        return event_id

    async def block(
        self, db: aiosqlite.Connection, record: dict[str, Any], keep_source_id: str | None = None
    ) -> None:
        """The block procedure (§4.2): suppress content and retire sources repeating it."""
        scope, content = record["scope"], record["content"]
        content_fp = fp(content)
        await db.execute("INSERT OR IGNORE INTO blocked VALUES (?,?)", (scope, content_fp))
        row = await (
            await db.execute("SELECT data FROM sources WHERE id=?", (record["sourceEntryId"],))
        ).fetchone()
        body: str | None = None
        if row is not None:
            try:
                body_value = json.loads(row[0]).get("content")
                body = body_value if isinstance(body_value, str) else None
            except (ValueError, AttributeError):
                body = None
        rows = await (
            await db.execute(
                "SELECT id, data, attempt FROM sources "
                "WHERE json_extract(data,'$.scope')=? AND state!='done'",
                (scope,),
            )
        ).fetchall()
        for sid, raw, attempt in rows:
            if sid == keep_source_id:
                continue
            try:
                src = json.loads(raw)
            except ValueError:
                continue
            text = src.get("content") if isinstance(src.get("content"), str) else ""
            targets = src.get("targets") if isinstance(src.get("targets"), list) else []
            if (
                sid == record["sourceEntryId"]
                or record["id"] in targets
                or (body is not None and text == body)
                or content in text
                or any(fp(c.content) == content_fp for c in extract(text, limit=None))
            ):
                await self._retire(db, sid, attempt)

    async def _retire(self, db: aiosqlite.Connection, source_id: str, attempt: int) -> None:
        await self.finish_call(db, source_id, attempt, "cancelled", "cancelled")
        await db.execute("UPDATE sources SET state='done', lease=0 WHERE id=?", (source_id,))

    async def finish_call(
        self,
        db: aiosqlite.Connection,
        source_id: str,
        attempt: int,
        outcome: str,
        code: str,
        charged_usd: float | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
    ) -> None:
        """Finish the claim's ``running`` model call (§2.9) and add its time to ``call_ms``."""
        now = int(self.now_ms())
        call = await (
            await db.execute(
                "SELECT at FROM model_calls WHERE source_id=? AND attempt=? AND outcome='running'",
                (source_id, attempt),
            )
        ).fetchone()
        if call is None:
            return
        await db.execute(
            "UPDATE model_calls SET outcome=?, finished_at=?, code=?, charged_usd=?, "
            "input_tokens=?, output_tokens=? WHERE source_id=? AND attempt=?",
            (outcome, now, code, charged_usd, input_tokens, output_tokens, source_id, attempt),
        )
        await db.execute(
            "UPDATE sources SET call_ms=call_ms+? WHERE id=?",
            (max(0, now - int(call[0])), source_id),
        )

    # ------------------------------------------------------------ curation

    async def pin(self, memory_id: str, *, expected_revision: int | None = None) -> str:
        """§4.6: pin an active record."""
        async with self.transaction() as db:
            record = await self._require(db, memory_id, expected_revision)
            if record["status"] not in ("provisional", "confirmed"):
                raise Refused("Resolve/correct the memory first")
            new = {**record, "revision": record["revision"] + 1, "layer": "pinned"}
            return await self.write(db, "manual", "pin", [new], record["scope"])

    async def unpin(self, memory_id: str, *, expected_revision: int | None = None) -> str:
        """§4.6: unpin (no status check)."""
        async with self.transaction() as db:
            record = await self._require(db, memory_id, expected_revision)
            new = {**record, "revision": record["revision"] + 1, "layer": "durable"}
            return await self.write(db, "manual", "unpin", [new], record["scope"])

    async def feedback(
        self,
        memory_id: str,
        verdict: str,
        *,
        source_id: str | None = None,
        at: str | None = None,
        expected_revision: int | None = None,
    ) -> str | None:
        """§4.3. Returns the event id, or None when upstream accepts but changes nothing."""
        if verdict not in VERDICTS:
            raise Refused("Invalid feedback verdict")
        slot = "utility" if verdict in ("useful", "unhelpful") else "accuracy"
        sid = source_id if source_id is not None else f"manual:{self._new_id()}"
        when = at if at is not None else self.now_iso()
        when_ms = parse_ms(when)
        if not valid_identifier(sid) or when_ms is None:
            raise Refused("Invalid feedback source")
        signal = {"verdict": verdict, "sourceId": sid, "at": when}
        async with self.transaction() as db:
            record = await self._require(db, memory_id, expected_revision)
            receipt = await (
                await db.execute(
                    "SELECT 1 FROM feedback_receipts WHERE source_id=? AND memory_id=?",
                    (sid, memory_id),
                )
            ).fetchone()
            if receipt is not None:
                return None
            if record["status"] not in ("provisional", "confirmed"):
                raise Refused("Resolve/correct the memory first")
            pair = ("useful", "unhelpful") if slot == "utility" else ("accurate", "incorrect")
            row = await (
                await db.execute(
                    "SELECT max(at) FROM feedback_receipts WHERE memory_id=? AND verdict IN (?,?)",
                    (memory_id, *pair),
                )
            ).fetchone()
            last = row[0] if row else None
            await db.execute(
                "INSERT INTO feedback_receipts VALUES (?,?,?,?)",
                (sid, memory_id, verdict, int(when_ms)),
            )
            feedback = record.get("feedback") if isinstance(record.get("feedback"), dict) else {}
            current = feedback.get(slot) if feedback else None
            current_ms = parse_ms(current.get("at")) if isinstance(current, dict) else None
            if (
                when_ms < (parse_ms(record["updatedAt"]) or 0.0)
                or (last is not None and last > when_ms)
                or (current_ms is not None and current_ms > when_ms)
                or (isinstance(current, dict) and current.get("verdict") == verdict)
            ):
                return None
            new = {
                **record,
                "revision": record["revision"] + 1,
                "feedback": {**(feedback or {}), slot: signal},
            }
            changes = [new]
            if verdict == "incorrect":
                await self.block(db, record)
                new["status"] = "conflicted"
                for dup in await self._same_hash(db, record):
                    if dup["status"] not in ("provisional", "confirmed"):
                        continue
                    await self.block(db, dup)
                    dup_feedback = (
                        dup.get("feedback") if isinstance(dup.get("feedback"), dict) else {}
                    )
                    changes.append(
                        {
                            **dup,
                            "revision": dup["revision"] + 1,
                            "status": "conflicted",
                            "feedback": {**(dup_feedback or {}), "accuracy": signal},
                        }
                    )
            return await self.write(
                db, "manual", f"Feedback {verdict}: {sid}", changes, record["scope"]
            )

    async def _retire_text(
        self, db: aiosqlite.Connection, record: dict[str, Any], at: str
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The correct/forget prologue (§4.4 step 4): block, suppress, forget duplicates."""
        await self.block(db, record)
        new = {
            **record,
            "revision": record["revision"] + 1,
            "updatedAt": at,
            "suppressedHashes": union(record.get("suppressedHashes"), [fp(record["content"])]),
        }
        dups = [
            {**dup, "status": "forgotten", "updatedAt": at, "revision": dup["revision"] + 1}
            for dup in await self._same_hash(db, record)
        ]
        return new, dups

    async def forget(self, memory_id: str, *, expected_revision: int | None = None) -> str:
        """§4.5: tombstone the record (any status, any layer) and its same-text twins."""
        async with self.transaction() as db:
            record = await self._require(db, memory_id, expected_revision)
            new, dups = await self._retire_text(db, record, self.now_iso())
            new["status"] = "forgotten"
            return await self.write(db, "manual", "forget", [*dups, new], record["scope"])

    async def correct(
        self, memory_id: str, text: str, *, expected_revision: int | None = None
    ) -> str:
        """§4.4: replace the content; the record becomes a confirmed manual correction."""
        content = js_trim(redact(text))
        if not 4 <= js_len(content) <= 800 or "[REDACTED" in content:
            raise Refused("Correction must be 4\u2013800 characters without credentials")
        async with self.transaction() as db:
            record = await self._require(db, memory_id, expected_revision)
            at = self.now_iso()
            new, dups = await self._retire_text(db, record, at)
            new.pop("searchTerms", None)
            new.pop("feedback", None)
            new["content"] = content
            new["status"] = "confirmed"
            new["evidence"] = {
                "basis": "manual_correction",
                "method": "manual",
                "sourceId": f"manual:{self._new_id()}",
                "at": at,
            }
            return await self.write(db, "manual", "correct", [*dups, new], record["scope"])

    async def conflict(
        self, memory_id: str, other_id: str, *, expected_revision: int | None = None
    ) -> str:
        """§4.7: quarantine two contradicting active records of one scope."""
        async with self.transaction() as db:
            record = await self._require(db, memory_id, expected_revision)
            other = await self._load(db, other_id)
            active = ("provisional", "confirmed")
            if (
                other is None
                or other["id"] == record["id"]
                or other["scope"] != record["scope"]
                or record["status"] not in active
                or other["status"] not in active
            ):
                raise Refused("Conflict needs two active memories in the same scope")
            await self.block(db, record)
            await self.block(db, other)
            changes = [
                {**other, "revision": other["revision"] + 1, "status": "conflicted"},
                {**record, "revision": record["revision"] + 1, "status": "conflicted"},
            ]
            return await self.write(db, "manual", "conflict", changes, record["scope"])

    async def resolve(self, memory_id: str, *, expected_revision: int | None = None) -> str:
        """§4.8: keep a conflicted record as confirmed and accurate."""
        async with self.transaction() as db:
            record = await self._require(db, memory_id, expected_revision)
            if record["status"] != "conflicted":
                raise Refused("Memory is not conflicted")
            at = self.now_iso()
            feedback = record.get("feedback") if isinstance(record.get("feedback"), dict) else {}
            signal = {"verdict": "accurate", "at": at, "sourceId": f"manual:{self._new_id()}"}
            new = {
                **record,
                "revision": record["revision"] + 1,
                "status": "confirmed",
                "feedback": {**(feedback or {}), "accuracy": signal},
            }
            return await self.write(db, "manual", "resolve", [new], record["scope"])

    async def adopt(
        self, memory_id: str, origin: str, *, expected_revision: int | None = None
    ) -> str:
        """§4.8: attach an unscoped legacy record to an origin (an absolute path)."""
        async with self.transaction() as db:
            record = await self._require(db, memory_id, expected_revision)
            if record["scope"] != "legacy" or not origin.strip():
                raise Refused("Only unscoped legacy memories can be adopted")
            scope = os.path.abspath(origin)
            new = {**record, "revision": record["revision"] + 1, "scope": scope}
            return await self.write(db, "manual", "adopt", [new], scope)

    async def undo_preview(self, event_id: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """What ``undo`` would write, as (current, restored) pairs, or the refusal it raises."""
        async with self._reading() as db:
            return await self._undo_plan(db, event_id)

    async def _undo_plan(
        self, db: aiosqlite.Connection, event_id: str
    ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        row = await (
            await db.execute("SELECT rowid, id, scope, data FROM events WHERE id=?", (event_id,))
        ).fetchone()
        if row is None:
            raise Refused("Unknown event id")
        event = parse_event_row(row[0], row[1], row[2], row[3])
        if isinstance(event, CorruptRow):
            raise Refused("Invalid history record")
        if not event.after:
            raise Refused("Event has no memory changes")
        plan: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for before, after in zip(event.before, event.after, strict=True):
            current = await self._load(db, after["id"])
            if current is None or js_json(_without(current, "reinforcedAt")) != js_json(
                _without(after, "reinforcedAt")
            ):
                raise Refused("Memory changed since this event; undo refused")
            base = dict(before) if before is not None else {**after, "status": "forgotten"}
            base["revision"] = after["revision"] + 1
            if "reinforcedAt" in current:
                base["reinforcedAt"] = current["reinforcedAt"]
            base["suppressedHashes"] = union(
                before.get("suppressedHashes") if before is not None else None,
                after.get("suppressedHashes"),
                [fp(after["content"])],
            )
            plan.append((current, base))
        return plan

    async def undo(self, event_id: str) -> str:
        """§4.9: restore what an event changed, if nothing changed since."""
        async with self.transaction() as db:
            plan = await self._undo_plan(db, event_id)
            row = await (
                await db.execute("SELECT scope, data FROM events WHERE id=?", (event_id,))
            ).fetchone()
            assert row is not None
            event = json.loads(row[1])
            for after in event["after"]:
                await self.block(db, after)
            restored = [r for _, r in plan]
            return await self.write(db, "manual", f"Undo {event_id}", restored, str(row[0]))


__all__ = ["MemoryStore", "StoreError"]
