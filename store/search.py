"""Search over memories, kept behind one function so a full recall port can replace it.

This is plain case-insensitive matching over content and search terms: every
query word must occur. Like pi's ``/memory search``, dormant records are
included (the caller marks them); forgotten, conflicted and disputed records
are not returned.
"""

from __future__ import annotations

from collections.abc import Iterable

from .model import Memory

DEFAULT_LIMIT = 10


def _score(m: Memory, words: list[str]) -> float:
    hay = (m.content + "\n" + "\n".join(m.search_terms)).casefold()
    if not all(w in hay for w in words):
        return 0.0
    return sum(hay.count(w) for w in words) * m.quality.factor


def search(memories: Iterable[Memory], query: str, limit: int = DEFAULT_LIMIT) -> list[Memory]:
    """The best ``limit`` matches, best first (ties by id)."""
    words = [w for w in query.casefold().split() if w]
    if not words:
        return []
    hits = [
        (s, m)
        for m in memories
        if m.active and not m.disputed
        for s in (_score(m, words),)
        if s > 0
    ]
    hits.sort(key=lambda sm: (-sm[0], sm[1].id))
    return [m for _, m in hits[:limit]]
