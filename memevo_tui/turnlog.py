"""The Turns view's data (no Textual): pi's sessions, each prompt replayed on the store
as it was then and as it is now (``store.turns``), read on a connection of its own,
read only, and closed after: the dashboard's own connection and its time dial are not
touched by the walk through the past."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from store import Clock, MemoryStore
from store.turns import SessionPrompts, Turn, replay_turns, session_files, session_prompts


@dataclass(frozen=True, slots=True)
class SessionTurns:
    """One session file and its turns, in branch order."""

    session: SessionPrompts
    turns: tuple[Turn, ...]

    @property
    def key(self) -> str:
        return str(self.session.file)

    @property
    def with_memories(self) -> int:
        """Turns that got memories then."""
        return sum(1 for t in self.turns if t.then)

    @property
    def differing(self) -> int:
        """Turns whose injection would differ now."""
        return sum(1 for t in self.turns if t.then is not None and
                   (t.dropped or t.added or t.changed))  # fmt: skip

    @property
    def unknown(self) -> int:
        return sum(1 for t in self.turns if t.then is None)


async def load_turns(
    db_path: Path, clock: Clock, root: Path, cache: object = None
) -> list[SessionTurns]:
    """Every session under ``root``, newest first, each with its turns replayed
    (raises ``StoreError`` when the store cannot be read)."""

    def read() -> list[SessionPrompts]:
        return [session_prompts(f, cache) for f in session_files(root)]

    sessions = await asyncio.to_thread(read)
    store = await MemoryStore.open(db_path, read_only=True, clock=clock)
    try:
        prompts = [p for s in sessions for p in s.prompts]
        memo = None
        if cache is not None:
            from .recallcache import TurnCache

            memo = await asyncio.to_thread(TurnCache, db_path)
        turns = await replay_turns(store, prompts, memo)
    finally:
        await store.close()
    by_prompt = {(str(t.prompt.file), t.prompt.entry_id): t for t in turns}
    out = [
        SessionTurns(s, tuple(by_prompt[(str(p.file), p.entry_id)] for p in s.prompts))
        for s in sessions
    ]
    out.sort(key=lambda s: (s.session.started, s.key), reverse=True)
    return out
