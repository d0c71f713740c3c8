"""Opening a store (§1.2): the file checks, the schema gate and the connection.

Nothing here creates, migrates or imports anything; the schema is read on a
read-only connection before a writable one is ever made.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import aiosqlite

from .errors import CannotOpen, MissingStore, UnsupportedSchema

SUPPORTED_SCHEMAS = ("2", "3", "4", "5", "6", "7")
WRITABLE_SCHEMA = "7"
BUSY_TIMEOUT_MS = 5000
REQUIRED_TABLES = ("metadata", "memories", "events", "sources", "blocked")


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


async def connect(path: Path, *, read_only: bool) -> aiosqlite.Connection:
    """One connection in autocommit mode (transactions are explicit), with the busy timeout."""
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


async def check_schema(path: Path) -> str:
    """The version gate of §1.2 step 7, on a read-only connection: nothing is written."""
    db = await connect(path, read_only=True)
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
        row = await (await db.execute("SELECT value FROM metadata WHERE key='schema'")).fetchone()
        if row is None:
            raise CannotOpen(f"{path} has no schema marker: open it in pi first")
        version = str(row[0])
        if version not in SUPPORTED_SCHEMAS:
            raise UnsupportedSchema(version)
        return version
    finally:
        await db.close()


@dataclass(frozen=True, slots=True)
class Opened:
    """A connection to a store that passed the opening rules, and how it was opened."""

    db: aiosqlite.Connection
    read_only: bool
    read_only_reason: str
    schema: str


async def open_connection(path: Path, *, read_only: bool) -> Opened:
    """Apply the opening rules and connect; read-only when the file or directory is not
    writable, or the schema needs migration. Raises ``CannotOpen`` with a one-line reason."""
    st = check_store_file(path)
    reason = "opened with --read-only" if read_only else ""
    if not read_only:
        if not (st.st_mode & stat.S_IWUSR) or not os.access(path, os.W_OK):
            read_only, reason = True, "the file is not writable"
        elif not os.access(path.parent, os.W_OK | os.X_OK):
            read_only, reason = True, "its directory is not writable"

    schema = await check_schema(path)
    if not read_only and schema != WRITABLE_SCHEMA:
        read_only = True
        reason = f"schema {schema} needs migration: open it in pi first to write to it"
    db = await connect(path, read_only=read_only)
    try:
        if not read_only:
            mode = (await (await db.execute("PRAGMA journal_mode")).fetchone() or ("",))[0]
            if str(mode).lower() != "wal":
                await db.execute("PRAGMA journal_mode=WAL")
            await db.execute("PRAGMA synchronous=FULL")
            if st.st_mode & 0o077:
                os.chmod(path, 0o600)
    except BaseException:
        await db.close()
        raise
    return Opened(db, read_only, reason, schema)
