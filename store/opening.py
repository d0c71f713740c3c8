"""Opening a store (§1.2): the file checks, the schema gate and the connection.

Nothing here creates, migrates or imports anything; the schema is read on a
read-only connection before a writable one is ever made. Every failure leaves as
a ``CannotOpen`` (or another ``StoreError``) with a one-line reason.

A store in a directory it cannot write to is still read, exactly: SQLite needs a
``-shm`` file beside a WAL database, so when none can be created the file is
opened ``immutable`` (nothing can be writing it there), or, when it has an
unapplied write-ahead log, a private snapshot copy of it is read instead.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote

import aiosqlite

from .errors import CannotOpen, MissingStore, NotAStore, UnsupportedSchema, translate
from .identity import FileIdentity
from .learning.policy import DEFAULT, InvalidPolicy, Policy, read_policy

SUPPORTED_SCHEMAS = ("2", "3", "4", "5", "6", "7")
WRITABLE_SCHEMA = "7"
BUSY_TIMEOUT_MS = 5000
REQUIRED_TABLES = ("metadata", "memories", "events", "sources", "blocked")
_NEEDS_A_WRITABLE_DIRECTORY = (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN)


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


async def connect(path: Path, *, read_only: bool, immutable: bool = False) -> aiosqlite.Connection:
    """One connection in autocommit mode (transactions are explicit), with the busy timeout."""
    uri = f"file:{quote(str(path.resolve()))}?mode={'ro' if read_only else 'rw'}"
    if immutable:
        uri += "&immutable=1"
    try:
        db = await aiosqlite.connect(uri, uri=True, isolation_level=None)
    except (sqlite3.Error, OSError) as exc:
        raise translate(exc, path) from exc
    try:
        await db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    except BaseException as exc:
        await db.close()
        if isinstance(exc, sqlite3.Error | OSError):
            raise translate(exc, path) from exc
        raise
    return db


async def check_schema(db: aiosqlite.Connection, path: Path) -> str:
    """The version gate of §1.2 step 7 on an open connection: reads, never writes."""
    try:
        rows = await (
            await db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ).fetchall()
        tables = {r[0] for r in rows}
        missing = [t for t in REQUIRED_TABLES if t not in tables]
        if missing:
            if not tables:
                raise NotAStore(f"{path} is an empty SQLite database, not a pi memory store")
            raise NotAStore(
                f"{path} is an SQLite database but not a pi memory store "
                f"(no {', '.join(missing)} table)"
            )
        row = await (await db.execute("SELECT value FROM metadata WHERE key='schema'")).fetchone()
    except (sqlite3.Error, OSError) as exc:
        raise translate(exc, path) from exc
    if row is None:
        raise CannotOpen(f"{path} has no schema marker: open it in pi first")
    version = str(row[0])
    if version not in SUPPORTED_SCHEMAS:
        raise UnsupportedSchema(version)
    return version


@dataclass(frozen=True, slots=True)
class Opened:
    """A connection to a store that passed the opening rules, and how it was opened."""

    db: aiosqlite.Connection
    read_only: bool
    read_only_reason: str
    schema: str
    cleanup: Callable[[], None] | None = None
    """Removes a snapshot copy when the store closes."""
    policy: Policy = DEFAULT
    identity: FileIdentity | None = None
    """The file and log the connection holds (None for a private snapshot)."""


def _writable_dir(path: Path) -> bool:
    return os.access(path.parent, os.W_OK | os.X_OK)


def _read_only_reason(path: Path, st: os.stat_result, asked: bool) -> str:
    """Why the store must open read-only, or "" when it may be written."""
    if asked:
        return "opened with --read-only"
    if not (st.st_mode & stat.S_IWUSR) or not os.access(path, os.W_OK):
        return "the file is not writable"
    if not _writable_dir(path):
        return "its directory is not writable"
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    if euid not in (None, 0, st.st_uid) and st.st_mode & 0o077:
        # pi narrows the mode to 0600 on every open (§1.2 step 5): only the owner can.
        return (
            f"it belongs to another user (uid {st.st_uid}) and is open to others "
            f"(mode {stat.S_IMODE(st.st_mode):o}); pi narrows it to 0600, which only its owner can"
        )
    return ""


async def _open_for_reading(
    path: Path,
) -> tuple[aiosqlite.Connection, str, Callable[[], None] | None]:
    """A read-only connection that has read the file's header, and a note on how it reads."""
    db = await connect(path, read_only=True)
    try:
        async with db.execute("SELECT 1 FROM sqlite_master LIMIT 1") as cursor:
            await cursor.fetchall()  # read through and closed: no snapshot stays held
        return db, "", None
    except BaseException as exc:
        # Closed on every way out, cancellation included: an open connection's
        # thread would keep the process from ever exiting.
        await db.close()
        if not isinstance(exc, sqlite3.Error | OSError):
            raise
        code = getattr(exc, "sqlite_errorcode", None)
        if _writable_dir(path) or code is None or code & 0xFF not in _NEEDS_A_WRITABLE_DIRECTORY:
            raise translate(exc, path) from exc
    wal = path.with_name(path.name + "-wal")
    if not wal.exists() or wal.stat().st_size == 0:
        db = await connect(path, read_only=True, immutable=True)
        return db, "read as it is on disk: its directory is read-only, so no live updates", None
    # Changes wait in the write-ahead log, which only a writable directory can apply:
    # read a private copy of the file and its log instead.
    snapshot = Path(tempfile.mkdtemp(prefix="memevo-snapshot-"))
    try:
        shutil.copyfile(path, snapshot / path.name)
        shutil.copyfile(wal, snapshot / wal.name)
        db = await connect(snapshot / path.name, read_only=True)
    except BaseException:
        shutil.rmtree(snapshot, ignore_errors=True)
        raise
    note = (
        "showing a private snapshot: its directory is read-only and it has an unapplied "
        "write-ahead log, so no live updates"
    )
    return db, note, lambda: shutil.rmtree(snapshot, ignore_errors=True)


async def open_connection(path: Path, *, read_only: bool) -> Opened:
    """Apply the opening rules and connect. Read-only when asked, when the file or its
    directory is not writable, when pi could not narrow its mode, or when the schema
    needs migration. Raises ``CannotOpen`` (or another ``StoreError``)."""
    st = check_store_file(path)
    reason = _read_only_reason(path, st, read_only)
    try:
        policy = read_policy(path.parent)
    except InvalidPolicy as exc:  # pi itself refuses this store: read it, never write it
        policy = replace(DEFAULT, problem=str(exc))
        reason = f"pi will not open this store: {exc}"
    db, note, cleanup = await _open_for_reading(path)
    try:
        schema = await check_schema(db, path)
        if not reason and schema != WRITABLE_SCHEMA:
            reason = f"schema {schema} needs migration: open it in pi first to write to it"
        if reason:
            why = f"{reason}; {note}" if note else reason
            identity = None if cleanup is not None else FileIdentity.of(path)
            return Opened(db, True, why, schema, cleanup, policy, identity)
    except BaseException:
        await db.close()
        if cleanup is not None:
            cleanup()
        raise
    await db.close()
    db = await connect(path, read_only=False)
    try:
        mode = (await (await db.execute("PRAGMA journal_mode")).fetchone() or ("",))[0]
        if str(mode).lower() != "wal":
            await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA synchronous=FULL")
        # A read makes the log exist from here. Read to the end and close the cursor: a
        # statement left running holds a read snapshot, and a write begun on a stale
        # snapshot fails at once with "database is locked", however long the timeout.
        async with db.execute("SELECT 1 FROM sqlite_master LIMIT 1") as cursor:
            await cursor.fetchall()
        if st.st_mode & 0o077:
            os.chmod(path, 0o600)
        identity = FileIdentity.of(path)
        if identity is None or identity.main != (st.st_dev, st.st_ino):
            raise CannotOpen(f"{path} was replaced or deleted while it was being opened")
    except BaseException as exc:
        await db.close()
        if isinstance(exc, sqlite3.Error | OSError):
            raise translate(exc, path) from exc
        raise
    return Opened(db, False, "", schema, policy=policy, identity=identity)
