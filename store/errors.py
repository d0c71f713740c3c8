"""Errors raised by the store. Messages are upstream's where upstream has one.

Every ``sqlite3`` or OS error that reaches the store's boundary is turned into one
of these by ``translate``, with its cause in words. Three families:

* ``CannotOpen``: the file cannot be opened as a memory store;
* ``Refused``: the store's rules refuse the operation (upstream's message);
* ``ReadOnly``, ``Busy`` and ``StoreFault`` (``Corrupt``, ``DiskFull``,
  ``PermissionDenied``, ``IOFailure``): the operation could not run.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path


class StoreError(Exception):
    """Base class for every error the store raises."""

    cause = "store error"
    """What went wrong, in a few words (for a status line)."""


class CannotOpen(StoreError):
    """The file cannot be opened as a memory store (missing, not a regular file, ...)."""

    cause = "cannot open"


class MissingStore(CannotOpen):
    """There is no file at the path."""

    cause = "no store"


class NotAStore(CannotOpen):
    """The file is not an SQLite database, or not a pi memory store."""

    cause = "not a memory store"


class UnsupportedSchema(CannotOpen):
    """The schema marker is not one this build supports."""

    cause = "unsupported schema"

    def __init__(self, version: str) -> None:
        super().__init__(
            f"Unsupported memory database version {version!r}: "
            "this memevo-tui supports schema 2 to 7 for reading and 7 for writing"
        )
        self.version = version


class NotInLog(StoreError):
    """A moment older than the event log can give exactly (an event there is unreadable
    or does not follow): the store as of then is not known, and is never guessed."""

    cause = "not in the event log"


class Refused(StoreError):
    """The store's rules refuse the operation (upstream's message)."""

    cause = "refused"


class Changed(Refused):
    """The record changed since the caller last read it."""


class ReadOnly(StoreError):
    """A write was asked of a store opened read-only."""

    cause = "read-only"


class Busy(StoreError):
    """Another writer held the database for longer than the busy timeout, or holds it
    exclusively."""

    cause = "busy"


class StoreFault(StoreError):
    """SQLite or the operating system failed; ``cause`` says how, in a few words."""

    cause = "store failure"


class Corrupt(StoreFault):
    cause = "corrupt file"


class DiskFull(StoreFault):
    cause = "disk full"


class PermissionDenied(StoreFault):
    cause = "permission denied"


class IOFailure(StoreFault):
    cause = "I/O error"


class Replaced(StoreFault):
    """The path no longer leads to the file this connection holds (``identity.py``):
    nothing is written, and the store must be opened again."""

    cause = "replaced on disk"


BUSY_MESSAGE = (
    "The memory store is busy: another program is writing to it or holds it exclusively "
    "(locking_mode=EXCLUSIVE), and it did not let go within 5 s; try again when it is done"
)


def _primary(code: int | None) -> int | None:
    return None if code is None else code & 0xFF


def free_bytes(path: Path) -> int | None:
    """Bytes free on the file system holding ``path`` (None when it cannot tell)."""
    try:
        st = os.statvfs(path if path.is_dir() else path.parent)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def corrupt(path: Path, detail: str, *, writing: bool = False) -> Corrupt:
    undone = "; nothing was written" if writing else ""
    recover = f"sqlite3 {path.name} .recover"
    return Corrupt(f"{path} is corrupt ({detail}){undone}; restore a backup, or try: {recover}")


def translate(exc: BaseException, path: Path, *, writing: bool = False) -> StoreError:
    """The store error for an ``sqlite3`` or OS error met on ``path``.

    ``writing``: the failure happened in a write transaction (which was rolled back).
    """
    if isinstance(exc, StoreError):
        return exc
    name = path.name
    undone = "; nothing was written" if writing else ""
    if isinstance(exc, OSError):
        detail = exc.strerror or str(exc)
        if exc.errno == errno.ENOSPC:
            return DiskFull(f"The disk holding {path} is full{undone}; free some space")
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return PermissionDenied(f"Permission denied on {path}: {detail}{undone}")
        return IOFailure(f"I/O error on {path}: {detail}{undone}")
    if not isinstance(exc, sqlite3.Error):
        return StoreFault(f"{type(exc).__name__} on {path}: {exc}{undone}")
    code = getattr(exc, "sqlite_errorcode", None)
    primary = _primary(code)
    text = str(exc)
    if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or (
        primary is None and ("locked" in text or "busy" in text)
    ):
        return Busy(BUSY_MESSAGE + ("; nothing was written" if writing else ""))
    if primary == sqlite3.SQLITE_FULL or "disk is full" in text:
        return DiskFull(f"The disk holding {path} is full{undone}; free some space and retry")
    if primary == sqlite3.SQLITE_NOTADB:
        return NotAStore(f"{path} is not an SQLite database ({text})")
    if primary == sqlite3.SQLITE_CORRUPT or "malformed" in text:
        return corrupt(path, text, writing=writing)
    if primary in (sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH, sqlite3.SQLITE_READONLY):
        return PermissionDenied(f"Permission denied on {path} ({text}){undone}")
    if primary == sqlite3.SQLITE_CANTOPEN:
        return CannotOpen(f"Cannot open {path} ({text})")
    if primary == sqlite3.SQLITE_IOERR:
        ext = getattr(exc, "sqlite_errorname", "") or ""
        if "SHM" in ext:
            free = free_bytes(path)
            why = "the disk is full" if free is not None and free < 1 << 20 else text
            return IOFailure(
                f"Cannot create or map {name}-shm, the shared-memory file SQLite keeps beside "
                f"the store ({why})"
            )
        free = free_bytes(path)
        if writing and free is not None and free < 1 << 20:
            return DiskFull(f"The disk holding {path} is full{undone}; free some space and retry")
        return IOFailure(f"I/O error on {path} ({text}){undone}")
    return StoreFault(f"SQLite failed on {path} ({text}){undone}")
