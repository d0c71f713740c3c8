"""Errors raised by the store. Messages are upstream's where upstream has one."""

from __future__ import annotations


class StoreError(Exception):
    """Base class for every error the store raises."""


class CannotOpen(StoreError):
    """The file cannot be opened as a memory store (missing, not a regular file, ...)."""


class MissingStore(CannotOpen):
    """There is no file at the path."""


class UnsupportedSchema(CannotOpen):
    """The schema marker is not one this build supports."""

    def __init__(self, version: str) -> None:
        super().__init__(
            f"Unsupported memory database version {version!r}: "
            "this memevo-tui supports schema 2 to 7 for reading and 7 for writing"
        )
        self.version = version


class Refused(StoreError):
    """The store's rules refuse the operation (upstream's message)."""


class ReadOnly(StoreError):
    """A write was asked of a store opened read-only."""


class Busy(StoreError):
    """Another writer held the database for longer than the busy timeout."""


class Changed(Refused):
    """The record changed since the caller last read it."""
