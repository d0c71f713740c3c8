"""A secret purged from every copy the store keeps: each of the given values replaced by
``[REDACTED:purged]`` in every record, every event's ``before`` and ``after``, every
source and every other row's text, in one ``BEGIN IMMEDIATE`` transaction written with
``secure_delete`` on; then the write-ahead log truncated where pi lets it be.

This is the one write that changes events (invariant 19: the log is append-only). What
it keeps: the same value is replaced the same way in every copy, so each event's
``before`` still equals the ``after`` before it, and each row still equals its last
event's ``after``, key for key; a record's ``hash`` is recomputed from its new content
(invariant 6); revisions, ids, scopes, ``blocked`` and the feedback receipts are left
as they are (the blocked hashes were made from the texts pi refused, and a hash holds
no secret). The records that hold a secret are forgotten through pi's own write
(``forget``) in the same transaction, before the copies are replaced: a purge killed at
any moment has forgotten and replaced everything, or nothing.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import translate
from ..js import fp, js_json

MARKER = "[REDACTED:purged]"
"""What a purged secret reads as, everywhere it was."""
_JSON_TABLES = ("memories", "events", "sources")


@dataclass(slots=True)
class PurgeReceipt:
    """What a purge wrote, place by place, and what it could not make sure of."""

    written: dict[str, int] = field(default_factory=dict)
    """Rows rewritten, by table."""
    copies: int = 0
    """Occurrences replaced."""
    wal: str = ""
    """What became of the write-ahead log's old pages ("truncated", or why not)."""
    forgotten: list[str] = field(default_factory=list)
    """The ids of the forget events written, one per record that held a secret."""
    records: set[str] = field(default_factory=set)
    """The records whose text (as stored, or in an event's copy) was replaced."""


def replaced(value: Any, secrets: Sequence[str]) -> tuple[Any, int]:
    """``value`` (decoded JSON) with every secret in its strings replaced, and how many."""
    if isinstance(value, str):
        count = 0
        for secret in secrets:
            if secret in value:
                count += value.count(secret)
                value = value.replace(secret, MARKER)
        return value, count
    if isinstance(value, dict):
        total = 0
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out[key], n = replaced(inner, secrets)
            total += n
        return out, total
    if isinstance(value, list):
        items = [replaced(inner, secrets) for inner in value]
        return [v for v, _ in items], sum(n for _, n in items)
    return value, 0


def _escaped(secret: str) -> tuple[str, ...]:
    """How a secret may read in a row's raw JSON: as is, or with its characters escaped."""
    return (secret, json.dumps(secret)[1:-1], "".join(f"\\u{ord(c):04x}" for c in secret))


def _may_hold(raw: str, secrets: Sequence[str]) -> bool:
    return "\\u" in raw or "\\n" in raw or any(s in raw for s in secrets)


async def purge_values(
    store: Any, values: Collection[str], forget: Sequence[str] = ()
) -> PurgeReceipt:
    """Forget the records ``forget`` (pi's write), then replace each of ``values`` by
    ``MARKER`` wherever the store keeps it, in one transaction (see the module's
    docstring); raises ``StoreError`` (read-only, busy, replaced, a full disk, a record
    pi refuses to forget) with nothing written."""
    secrets = sorted({v for v in values if len(v) >= 4}, key=len, reverse=True)
    receipt = PurgeReceipt()
    if not secrets and not forget:
        return receipt
    db = store._db  # the one connection: secure_delete is set outside the transaction
    await db.execute("PRAGMA secure_delete = ON")
    try:
        async with store.transaction() as tx:
            for memory_id in forget:
                receipt.forgotten.append(await store.forget_in(tx, memory_id))
            for table in _JSON_TABLES:
                await _purge_json(tx, table, secrets, receipt)
            await _purge_columns(tx, secrets, receipt)
    finally:
        await db.execute("PRAGMA secure_delete = OFF")
    receipt.wal = await _truncate_wal(db, store.path)
    return receipt


async def _purge_json(tx: Any, table: str, secrets: Sequence[str], receipt: PurgeReceipt) -> None:
    rows = await (await tx.execute(f"SELECT rowid, data FROM {table}")).fetchall()
    for rowid, raw in rows:
        if not isinstance(raw, str) or not _may_hold(raw, secrets):
            continue
        try:
            data = json.loads(raw)
        except ValueError:  # a damaged row: its text, replaced as text
            text, n = replaced(raw, [e for s in secrets for e in _escaped(s)])
            if n:
                await tx.execute(f"UPDATE {table} SET data = ? WHERE rowid = ?", (text, rowid))
                receipt.written[table] = receipt.written.get(table, 0) + 1
                receipt.copies += n
            continue
        new, n = replaced(data, secrets)
        if not n:
            continue
        receipt.records.update(_record_ids(table, new))
        text = js_json(new)
        if table == "memories" and isinstance(new, dict) and isinstance(new.get("content"), str):
            await tx.execute("UPDATE memories SET data = ?, hash = ? WHERE rowid = ?",
                             (text, fp(new["content"]), rowid))  # fmt: skip
        else:
            await tx.execute(f"UPDATE {table} SET data = ? WHERE rowid = ?", (text, rowid))
        receipt.written[table] = receipt.written.get(table, 0) + 1
        receipt.copies += n


def _record_ids(table: str, data: Any) -> list[str]:
    """The records a row is about: a memory's id, an event's before and after ids."""
    if not isinstance(data, dict):
        return []
    if table == "memories":
        return [data["id"]] if isinstance(data.get("id"), str) else []
    if table != "events":
        return []
    copies = [*(data.get("before") or []), *(data.get("after") or [])]
    return [c["id"] for c in copies if isinstance(c, dict) and isinstance(c.get("id"), str)]


async def _purge_columns(tx: Any, secrets: Sequence[str], receipt: PurgeReceipt) -> None:
    """Every text column of every other table (``blocked``: hashes only)."""
    names = await (await tx.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    )).fetchall()  # fmt: skip
    for (table,) in names:
        if table in _JSON_TABLES or table == "blocked":
            continue
        columns = [
            r[1] for r in await (await tx.execute(f'PRAGMA table_info("{table}")')).fetchall()
        ]
        rows = await (await tx.execute(f'SELECT rowid, * FROM "{table}"')).fetchall()
        for row in rows:
            for column, value in zip(columns, row[1:], strict=False):
                if not isinstance(value, str):
                    continue
                new, n = replaced(value, secrets)
                if n:
                    await tx.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?',
                                     (new, row[0]))  # fmt: skip
                    receipt.written[table] = receipt.written.get(table, 0) + 1
                    receipt.copies += n


async def _truncate_wal(db: Any, path: Any, tries: int = 5) -> str:
    """Checkpoint the write-ahead log and truncate it, so the old pages are gone; while
    pi's open connection holds it busy, try again a few times, then say so."""
    for attempt in range(tries):
        try:
            busy, _, _ = await (await db.execute("PRAGMA wal_checkpoint(TRUNCATE)")).fetchone()
        except sqlite3.OperationalError as exc:  # a reader kept it past the busy timeout:
            if "locked" not in str(exc) and "busy" not in str(exc):  # the purge is written
                raise translate(exc, path, writing=True) from exc
            busy = 1
        except (sqlite3.Error, OSError) as exc:
            raise translate(exc, path, writing=True) from exc
        if not busy:
            return "truncated"
        await asyncio.sleep(0.2 * (attempt + 1))
    return ("the -wal still holds old pages until pi's next checkpoint; close pi and "
            "run purge again")  # fmt: skip
