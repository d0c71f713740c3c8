"""A recall index carried from moment to moment (the turn replay): each record's
quality at a new moment computed for the whole column at once, its words and static
figures kept while the record stays the same version."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..records.model import Memory, retimed
from ..records.quality import (
    DAY_MS,
    POLICY,
    confirmed_ms,
    evidence_weight,
    verdict_weights,
)
from .index import Floats, RecallIndex, WordsOf, record_words


def _standing_key(m: Memory) -> tuple[Any, ...]:
    """Which version of a record this is: pi raises a record's revision with every
    write to it (an undo too), and stamps ``reinforcedAt`` alone when a learning run
    confirms it; so these name everything its index entry depends on but its moment."""
    return (m.revision, m.updated_at, m.reinforced_at)


def _static(m: Memory) -> tuple[float, float, float, float, float, float, float, bool]:
    """The figures of a record's quality that do not move with time: its confirmation,
    its kind's half-life, floor and dormancy horizon, and its evidence, utility and
    accuracy weights (``quality._standing`` takes the rest from the moment)."""
    half_life, floor, dormant_days = POLICY[m.kind]
    utility, accuracy = verdict_weights(
        m.utility.verdict if m.utility else None, m.accuracy.verdict if m.accuracy else None
    )
    return (
        confirmed_ms(m.updated_at, m.reinforced_at),
        half_life,
        floor,
        dormant_days,
        evidence_weight(m.kind, m.evidence.basis if m.evidence else None),
        utility,
        accuracy,
        m.layer == "pinned",
    )


class MovingIndex:
    """One recall index carried from moment to moment, for a replay that asks recall of
    the store at many moments (pi's past turns, newest first). Each moment's index is
    the previous one with the records that changed between them replaced, those that
    did not exist yet taken out, and every record's time-dependent columns (its quality
    factor and dormancy) computed for the moment at once, with the arithmetic of
    ``quality._standing`` in the same order, so that its recall is exactly that of
    ``RecallIndex(rows)`` (``tests/test_turns.py`` compares them prompt by prompt)."""

    def __init__(self, words_of: WordsOf = record_words) -> None:
        self._words_of = words_of
        self._index: RecallIndex | None = None
        self._rows: dict[str, Memory] = {}
        """The records of the last moment, as given (most are the same objects at the
        next moment: only the changed ones cost anything)."""
        self._figures = np.zeros((0, 8), dtype=np.float64)
        """Per position of the index: ``_static``'s figures of its record."""

    def at(self, rows: Sequence[Memory], now_ms: float) -> RecallIndex:
        """The index of exactly ``rows``: the records at one moment, each with its
        quality taken at ``now_ms`` (whatever moment the records carry: a candidate
        recall returns carries ``now_ms``)."""
        last, prev = self._index, self._rows
        if last is None:
            return self._build(rows, now_ms)
        changed: list[Memory] = []
        for m in rows:
            p = prev.get(m.id)
            if p is not m and (p is None or _standing_key(p) != _standing_key(m)):
                changed.append(m)
        current = {m.id: m for m in rows}
        if len(current) != len(rows):  # an id twice: what pi never writes; built afresh
            return self._build(rows, now_ms)
        new = last.updated(changed, self._words_of)
        by_id = new._by_id
        if len(prev) + sum(1 for m in changed if m.id not in prev) != len(rows):
            gone = [by_id.pop(i) for i in prev if i not in current]  # not created yet
            new._alive[np.array(gone, dtype=np.int64)] = False
        figures = self._figures
        if len(new._memories) > len(figures):
            grown = np.zeros((len(new._memories), 8), dtype=np.float64)
            grown[: len(figures)] = figures
            figures = grown
        for m in changed:
            figures[by_id[m.id]] = _static(m)
        self._apply_moment(new, figures, now_ms)
        self._index, self._rows, self._figures = new, current, figures
        return new

    def _build(self, rows: Sequence[Memory], now_ms: float) -> RecallIndex:
        built = RecallIndex((retimed(m, now_ms) for m in rows), self._words_of)
        built._moment = now_ms
        figures = np.array([_static(m) for m in built._memories], dtype=np.float64)
        self._index, self._rows = built, {m.id: m for m in rows}
        self._figures = figures.reshape(len(built._memories), 8)
        return built

    @staticmethod
    def _apply_moment(index: RecallIndex, figures: Floats, now_ms: float) -> None:
        """Every position's quality factor and dormancy at ``now_ms``: ``_standing``'s
        arithmetic, element by element in its order (a dead position's are not read)."""
        confirmed, half_life, floor, dormant_days, weight, utility, accuracy = figures[:, :7].T
        pinned = figures[:, 7] != 0
        age = np.maximum(0.0, (now_ms - confirmed) / DAY_MS)
        power = np.array([2**v for v in ((-age) / half_life).tolist()], dtype=np.float64)
        freshness = np.where(pinned, 1.0, floor + (1 - floor) * power)
        index._factor = freshness * weight * utility * accuracy
        index._dormant = ~pinned & (age > dormant_days)
        index._moment = now_ms
        index._requalify()
