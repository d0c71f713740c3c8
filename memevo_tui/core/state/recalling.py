"""The recall index of the loaded records, kept current off the UI thread, and each
record's recall log once pi's sessions are replayed. No Textual here."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from store import CorruptRow, Memory

from .changes import Row

if TYPE_CHECKING:  # recall is imported when first used
    from store import RecallIndex

    from ..turnlog import InjectionLog


class RecallKeeper:
    """The index, the rows changed in place since it was built, and the recall log."""

    def __init__(self) -> None:
        self.changed: dict[str, Row] = {}
        """Rows changed in place since the index was built."""
        self.loads = 0
        """Wholesale replacements of the rows so far: the index is rebuilt after one."""
        self._index: tuple[RecallIndex, int] | None = None
        self.injections: InjectionLog | None = None
        """Each record's recall log, once the Turns view replayed pi's sessions."""

    def touched(self, rows: Iterable[Row]) -> None:
        """These rows changed in place: the index takes them at its next use."""
        self.changed.update((r.id, r) for r in rows)

    def replaced(self) -> None:
        """Every row was replaced: the index is rebuilt at its next use."""
        self.loads += 1
        self.changed.clear()

    async def index(
        self,
        rows: Sequence[Row],
        cached: Path | None,
        *,
        save: bool,
        warn: Callable[[str], None],
    ) -> RecallIndex:
        """The recall index of ``rows``: the rows changed in place applied to it (cheap);
        after a wholesale replacement, or when a row turned corrupt, rebuilt (from the
        cache at ``cached`` when it holds them; ``save``: keep it there)."""
        pending = dict(self.changed)
        state = self._index
        loads = self.loads
        if state is not None and state[1] == loads and not pending:
            return state[0]
        if (
            state is None
            or state[1] != loads
            or any(isinstance(r, CorruptRow) for r in pending.values())
        ):
            from ..recallcache import indexed  # numpy: imported at the first recall

            memories = [r for r in rows if isinstance(r, Memory)]
            warned: list[str] = []
            index = await asyncio.to_thread(
                indexed, cached, memories, save=save, warn=warned.append
            )
            for line in warned:
                warn(line)
        else:
            changed = [r for r in pending.values() if isinstance(r, Memory)]
            index = await asyncio.to_thread(state[0].updated, changed)
        for memory_id, row in pending.items():
            if self.changed.get(memory_id) is row:
                del self.changed[memory_id]
        # Not frozen (gc.freeze): the index is a few dozen containers, and freezing here
        # made every cycle not yet collected at that moment permanent.
        self._index = (index, loads)
        return index

    def counts(self) -> dict[str, int] | None:
        """How many replayed turns injected each record (None: not replayed yet)."""
        return None if self.injections is None else self.injections.counts()

    def last(self) -> dict[str, float] | None:
        """When a replayed turn last injected each record (None: not replayed yet)."""
        return None if self.injections is None else self.injections.last_moments()

    def line(self, memory_id: str) -> str | None:
        """The record's recall log in a line (None: pi's sessions are not replayed yet)."""
        return None if self.injections is None else self.injections.line(memory_id)
