"""``MemoryStore``: the one facade scripts and the app import.

Everything follows ../shared/spec/STORE.md; section numbers refer to it. The
parts live in their own modules: the opening rules (``opening``), the shared
connection (``base``), validated reads (``reads``), the common writer
(``writer``) and the curation verbs (``curation``).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from .base import IdFactory
from .clock import Clock, system_clock
from .errors import StoreError
from .js import iso
from .opening import check_store_file, open_connection
from .reads import Reads
from .write.curation import Curation


def _uuid4() -> str:
    return str(uuid.uuid4())


class MemoryStore(Curation, Reads):
    """pi-memory-evolution's store, read and written as upstream does."""

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        clock: Clock = system_clock,
        new_id: IdFactory | None = None,
        as_of: float | None = None,
    ) -> MemoryStore:
        """Open an existing store (§1.2) without creating, migrating or importing anything.

        Falls back to read-only when the file or its directory is not writable.
        Raises ``CannotOpen`` (or ``UnsupportedSchema``) with a one-line reason.

        ``as_of`` (epoch ms, a moment in the past) opens the store as it was then: every
        read replays the event log back to it (``Reads.past``), and nothing is written.
        """
        p = Path(path)
        opened = await open_connection(p, read_only=read_only or as_of is not None)
        store = cls(
            opened.db,
            p,
            read_only=opened.read_only,
            read_only_reason=opened.read_only_reason,
            schema=opened.schema,
            clock=clock,
            new_id=new_id or _uuid4,
            on_close=opened.cleanup,
            policy=opened.policy,
            identity=opened.identity,
        )
        if as_of is not None:
            store.as_of = as_of
            store.read_only, store.read_only_reason = True, f"the store as of {iso(as_of)}"
        return store


__all__ = ["MemoryStore", "StoreError", "check_store_file"]
