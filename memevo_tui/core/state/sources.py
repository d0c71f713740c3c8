"""Where a record came from, with pi's session files around each source. No Textual."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store import MemoryStore, Source

if TYPE_CHECKING:
    from store import Provenance


async def provenance(
    store: MemoryStore, memory_id: str, root: Path, turns: int, *, cached: bool
) -> tuple[Provenance, list[dict[str, Any]]]:
    """``store.pi.provenance``, and each source's place in pi's session files under ``root``
    with ``turns`` turns on each side (read in a thread, never written; ``cached``: the
    session index kept in the cache directory). Raises ``StoreError``."""
    from store import session_context

    from ..recallcache import SessionIndexCache

    p = await store.provenance(memory_id)
    cache = SessionIndexCache() if cached else None

    def contexts() -> list[dict[str, Any]]:
        return [
            session_context(
                link.source_id,
                link.source.scope if isinstance(link.source, Source) else "",
                root,
                turns,
                cache,
            )
            for link in p.sources
        ]

    return p, await asyncio.to_thread(contexts)
