"""The common writer (§4.1), the block procedure (§4.2) and the transaction they run in."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite

from ..base import StoreBase
from ..errors import Changed, ReadOnly, Refused, translate
from ..js import fp, js_json, parse_ms
from ..recall.extract import extract
from ..records.model import CorruptRow
from ..records.rows import parse_memory_row
from ..records.validate import record_problem


class Writer(StoreBase):
    """Transactions and the write procedures every operation shares."""

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: all of it commits, or none of it.

        Any failure (a refusal, SQLite, the disk) rolls back what was begun and leaves
        as a ``StoreError``; a failed COMMIT reports its own cause. Nothing is begun,
        or committed, once the path no longer leads to the file held (``Replaced``).
        """
        if self.read_only:
            raise ReadOnly(f"The store is read-only ({self.read_only_reason})")
        async with self._lock:
            db = self._db
            self.check_file(writing=True)
            try:
                await db.execute("BEGIN IMMEDIATE")
            except (sqlite3.Error, OSError) as exc:
                raise translate(exc, self.path, writing=True) from exc
            try:
                yield db
                self.check_file(writing=True)  # replaced while it ran: roll it back
                await db.execute("COMMIT")
            except BaseException as exc:
                await self._roll_back()
                if isinstance(exc, sqlite3.Error | OSError):
                    raise translate(exc, self.path, writing=True) from exc
                raise

    async def _roll_back(self) -> None:
        """Roll back if a transaction is still open. SQLite ends some failed transactions
        itself (a full disk at COMMIT, say); a second failure never hides the first."""
        try:
            if self._db.in_transaction:
                await self._db.execute("ROLLBACK")
        except (sqlite3.Error, OSError, ValueError):
            pass

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
