"""What every part of the store shares: the one connection, its lock and the clock."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Self
from urllib.parse import quote

import aiosqlite

from .clock import Clock
from .errors import Replaced, translate
from .identity import FileIdentity
from .js import iso
from .learning.policy import DEFAULT, Policy

IdFactory = Callable[[], str]


class StoreBase:
    """One aiosqlite connection; an asyncio lock keeps this process's own calls from
    interleaving (SQLite's busy timeout handles other processes)."""

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
        on_close: Callable[[], None] | None = None,
        policy: Policy = DEFAULT,
        identity: FileIdentity | None = None,
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
        self._on_close = on_close
        self.policy = policy
        """The routing and budget policy (``recovery.json``) pi reads beside the store."""
        self.identity = identity
        """The file and write-ahead log this connection holds (None: a private snapshot,
        nothing to compare)."""
        self.as_of: float | None = None
        """Set (epoch ms): every read gives the store as it was then, replayed from the
        event log (``Reads.past``); the clock should stand at the same moment."""
        self._past: Any = None
        self._replay: Any = None
        self.past_keep: Any = None
        """Where a walk of the whole event log is kept between processes
        (``pastkeep.PastKeep``; None: nowhere), set by whoever opened the store."""

    def file_problem(self) -> str | None:
        """How the path no longer leads to the file this connection holds, or None."""
        return None if self.identity is None else self.identity.problem()

    def check_file(self, *, writing: bool = False) -> None:
        """Raise ``Replaced`` when the file at the path is not the one held (two
        ``lstat`` calls): before every write, and on every live poll."""
        problem = self.file_problem()
        if problem is not None:
            done = "nothing was written" if writing else "this is what it was before"
            raise Replaced(f"{problem}: {done}")

    async def close(self) -> None:
        """Close the connection. When the log's shared index (``-shm``) at the path is
        not the one it opened, it closes without a checkpoint: pi commits through the new
        index, unseen here, and this connection's checkpoint would throw those commits
        away; the next connection recovers them from the log."""
        index_changed = self.identity is not None and self.identity.index_problem() is not None
        guard = self._no_checkpoint() if index_changed else None
        try:
            await self._db.close()
        except (sqlite3.Error, OSError, ValueError):
            pass  # nothing is pending: every write committed or rolled back already
        finally:
            if guard is not None:
                with contextlib.suppress(sqlite3.Error):
                    guard.close()
            if self._on_close is not None:
                self._on_close()
                self._on_close = None

    def _no_checkpoint(self) -> sqlite3.Connection | None:
        """A read-only connection of this process holding a read lock on the store while
        the main one closes. SQLite checkpoints on close only when it can lock the file
        exclusively (the last connection): the guard's lock prevents that, and the guard,
        read-only, can take no write lock when it closes after it. Nothing is copied from
        the log into the file, and the log is left for the next connection to recover."""
        try:
            uri = f"file:{quote(str(self.path))}?mode=ro"
            guard = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=5)
            try:
                guard.execute("SELECT count(*) FROM sqlite_master").fetchall()
                guard.execute("BEGIN")  # a read transaction: its lock held until closed
                guard.execute("SELECT count(*) FROM sqlite_master").fetchall()
            except sqlite3.Error:
                guard.close()
                return None
        except sqlite3.Error:
            return None
        return guard

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def now_ms(self) -> float:
        return self.clock()

    def now_iso(self) -> str:
        return iso(self.clock())

    @asynccontextmanager
    async def _reading(self) -> AsyncIterator[aiosqlite.Connection]:
        """The connection, for reads; an SQLite or OS error leaves as a ``StoreError``."""
        async with self._lock:
            try:
                yield self._db
                # aiosqlite's thread keeps the last answer it handed over until the
                # next statement: a whole table's rows (84 MB at 100,000 records)
                # would stay alive after the caller dropped them. One tiny statement,
                # read through (no statement is left open, so no snapshot is held),
                # takes its place.
                await self._db.execute_fetchall("SELECT 1")
            except (sqlite3.Error, OSError) as exc:
                raise translate(exc, self.path) from exc

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
