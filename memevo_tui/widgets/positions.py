"""Where each row of a list is, by its key, kept through insertions and removals
without numbering 100,000 rows again for each (the live list's new records)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")


class Positions(Generic[T]):
    """Row key -> index, built on demand, then translated through the moves since."""

    MOVES_KEPT = 64
    """Insertions and removals ``index_of`` translates positions through before the
    positions of every row are taken again."""

    def __init__(self, row_key: Callable[[T], str]) -> None:
        self.row_key = row_key
        self._positions: dict[str, int] | None = None
        self._moves: list[tuple[int, int]] = []
        """The insertions (+1) and removals (-1) since ``_positions`` was built, by
        index, oldest first: ``index_of`` translates a position through them."""
        self._late: dict[str, tuple[int, int]] = {}
        """Rows inserted since: their index then, and how many moves came before."""

    def forget(self) -> None:
        """The rows were replaced: numbered again when next asked."""
        self._positions = None
        self._moves.clear()
        self._late.clear()

    def index_of(self, rows: Sequence[T], key: str) -> int | None:
        """The position in ``rows`` of the row with this key, or None."""
        positions = self._positions if self._positions is not None else self._index(rows)
        at = positions.get(key)
        if at is not None:
            start = 0
        elif (late := self._late.get(key)) is not None:
            at, start = late
        else:
            return None
        for where, step in self._moves[start:]:  # the insertions and removals since
            if step > 0:
                at += at >= where
            else:
                at -= at > where
        if at < len(rows) and self.row_key(rows[at]) == key:
            return at
        return self._index(rows).get(key)  # not expected: read them all again

    def _index(self, rows: Sequence[T]) -> dict[str, int]:
        row_key = self.row_key
        self.forget()
        self._positions = {row_key(r): i for i, r in enumerate(rows)}
        return self._positions

    def inserted(self, index: int, key: str) -> None:
        """A row was put at ``index``."""
        if self._moved(index, 1):
            self._late[key] = (index, len(self._moves))

    def removed(self, index: int, key: str) -> None:
        """The row at ``index`` was taken out."""
        if self._moved(index, -1) and self._positions is not None:
            self._positions.pop(key, None)
            self._late.pop(key, None)

    def _moved(self, index: int, step: int) -> bool:
        """Keep the move; False when nothing is numbered (or no longer is)."""
        if self._positions is None:
            return False
        if len(self._moves) >= self.MOVES_KEPT:
            self.forget()  # numbered again when next asked
            return False
        self._moves.append((index, step))
        return True
