"""The store over time: what a Timeline plots, from the event log.

- ``standing``: how many records were fresh, aging, dormant, pinned, forgotten,
  conflicted or disputed at each of a series of moments, each moment's records
  replayed by ``PastLog`` (the one path to the past) and their quality taken then.
- ``activity``: events per day by actor (``local``, ``model``, ``manual``,
  ``migration``), one statement over the log.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ._js import parse_ms
from .base import StoreBase
from .model import CorruptRow, Memory
from .past import PastLog

DAY_MS = 86_400_000
WEEK_MS = 7 * DAY_MS

Row = Memory | CorruptRow


@dataclass(frozen=True, slots=True)
class Standing:
    """The records at one moment, counted by their state (``Memory.state``)."""

    at: float
    counts: dict[str, int]
    exact: bool
    """False where the event log is not exact back to this moment (nothing is
    counted then: ``counts`` is empty)."""


async def standing(
    log: PastLog, now: Sequence[Row], upto: int, moments: Sequence[float]
) -> list[Standing]:
    """The records' states at each of ``moments`` (oldest first in the answer). The
    moments are visited newest first, so the walk only ever moves back."""
    out: list[Standing] = []
    for when in sorted(moments, reverse=True):
        past = await log.at(when, now, upto)
        if past.clamped:
            out.append(Standing(when, {}, exact=False))
            continue
        counts = Counter(r.state for r in past.rows if isinstance(r, Memory))
        out.append(Standing(when, dict(counts), exact=True))
    out.reverse()
    return out


def weeks(end: float, count: int) -> list[float]:
    """``count`` moments a week apart, the last at ``end``."""
    return [end - (count - 1 - i) * WEEK_MS for i in range(count)]


async def activity(store: StoreBase, start: float, end: float) -> dict[int, Counter[str]]:
    """Events per UTC day (days since the epoch) by actor, for events written in
    [``start``, ``end``]. An event that is not JSON, or whose moment is unreadable, is
    not counted."""
    rows = await store.query(
        "SELECT json_extract(data, '$.at'), json_extract(data, '$.actor') FROM events "
        "WHERE json_valid(data)"
    )
    days: dict[int, Counter[str]] = {}
    for at, actor in rows:
        moment = parse_ms(at)
        if moment is None or not start <= moment <= end or not isinstance(actor, str):
            continue
        days.setdefault(int(moment // DAY_MS), Counter())[actor] += 1
    return days
