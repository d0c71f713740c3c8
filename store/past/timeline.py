"""The store over time: what a Timeline plots, from the event log.

- ``standing``: how many records were fresh, aging, dormant, pinned, forgotten,
  conflicted or disputed at each of a series of moments, each moment's records
  replayed by ``PastLog`` (the one path to the past) and their quality taken then.
- ``activity``: events per day by actor (``local``, ``model``, ``manual``,
  ``migration``), one statement over the log.
- ``runs``: learning runs per day, finished and failed, with the spend the
  provider reported for them. ``model_calls`` keeps only a day, so this comes
  from what lasts: a finished run's event (actor ``model``, reason
  ``<model>: <sourceId>``) dates it, and its source's diagnostic holds its
  ``reportedUsd``; a failed source counts once, on its last failure
  (``failed_at``), which is all the store keeps of its failures.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..base import StoreBase
from ..js import is_safe_integer, parse_ms
from ..records.model import CorruptRow, Memory
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
    log: PastLog,
    now: Sequence[Row],
    upto: int,
    moments: Sequence[float],
    each: Callable[[Standing], None] | None = None,
    scope: str = "",
) -> list[Standing]:
    """The records' states at each of ``moments`` (oldest first in the answer). The
    moments are visited newest first, so the walk only ever moves back; ``each`` hears
    of every moment as soon as it is counted. ``scope``: count one origin's records
    only ("" every origin's)."""
    out: list[Standing] = []
    for when in sorted(moments, reverse=True):
        past = await log.at(when, now, upto)
        if past.clamped:
            found = Standing(when, {}, exact=False)
        else:
            counts = Counter(
                r.state
                for r in past.rows
                if isinstance(r, Memory) and (not scope or r.scope == scope)
            )
            found = Standing(when, dict(counts), exact=True)
        out.append(found)
        if each is not None:
            each(found)
    out.reverse()
    return out


def weeks(end: float, count: int) -> list[float]:
    """``count`` moments a week apart, the last at ``end``."""
    return [end - (count - 1 - i) * WEEK_MS for i in range(count)]


@dataclass(frozen=True, slots=True)
class Bucket:
    """A column of the Timeline: whole UTC days, ``first`` to ``last`` (days since the
    epoch); ``end`` is the moment its records are counted at (its last millisecond, or
    now for the bucket of today)."""

    first: int
    last: int
    end: float

    @property
    def start(self) -> float:
        return float(self.first * DAY_MS)

    def days(self) -> range:
        return range(self.first, self.last + 1)


def buckets(now: float, days: int, count: int) -> list[Bucket]:
    """``count`` buckets of ``days`` UTC days each, oldest first, the last ending today."""
    today = int(now // DAY_MS)
    first = today - count * days + 1
    out = []
    for i in range(count):
        start = first + i * days
        last = start + days - 1
        out.append(Bucket(start, last, min(now, float((last + 1) * DAY_MS - 1))))
    return out


async def activity(
    store: StoreBase, start: float, end: float, scope: str = ""
) -> dict[int, Counter[str]]:
    """Events per UTC day (days since the epoch) by actor, for events written in
    [``start``, ``end``] (of one origin: ``scope``; "" every one). An event that is not
    JSON, or whose moment is unreadable, is not counted."""
    rows = await store.query(
        "SELECT json_extract(data, '$.at'), json_extract(data, '$.actor') FROM events "
        "WHERE json_valid(data) AND (? = '' OR scope = ?)",
        (scope, scope),
    )
    days: dict[int, Counter[str]] = {}
    for at, actor in rows:
        moment = parse_ms(at)
        if moment is None or not start <= moment <= end or not isinstance(actor, str):
            continue
        days.setdefault(int(moment // DAY_MS), Counter())[actor] += 1
    return days


@dataclass(slots=True)
class RunDay:
    """One day's learning runs."""

    done: int = 0
    failed: int = 0
    usd: float = 0.0
    """The spend providers reported for those runs (``reportedUsd``)."""
    priced: int = 0
    """How many of them reported a spend."""


WITHHELD = "; weaker replacements withheld="


def run_source(reason: object) -> str | None:
    """The source id a learning run's event names (``<model>: <sourceId>[; weaker
    replacements withheld=<n>]``), or None when the reason is not in that form."""
    if not isinstance(reason, str) or ": " not in reason:
        return None
    tail = reason.rpartition(": ")[2]
    if WITHHELD in reason:
        head, _, count = reason.rpartition(WITHHELD)
        if count.isdigit():
            tail = head.rpartition(": ")[2]
    return tail or None


def _usd(value: object) -> float | None:
    """A ``reportedUsd`` as pi accepts it: a finite number, at least 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return float(value)


async def runs(store: StoreBase, start: float, end: float, scope: str = "") -> dict[int, RunDay]:
    """Learning runs per UTC day (days since the epoch) in [``start``, ``end``]: runs
    that finished (dated by their event) and sources that failed (dated by their last
    failure), with the spend reported for them; of one origin (``scope``; "" every
    one). Unreadable rows are not counted."""
    spend: dict[str, float] = {}
    failures: list[tuple[float, float | None]] = []
    for source_id, state, failed_at, diagnostic in await store.query(
        "SELECT id, state, failed_at, CASE WHEN json_valid(diagnostic) "
        "THEN json_extract(diagnostic, '$.reportedUsd') END FROM sources "
        "WHERE ? = '' OR (json_valid(data) AND json_extract(data, '$.scope') = ?)",
        (scope, scope),
    ):
        usd = _usd(diagnostic)
        if state == "done" and usd is not None and isinstance(source_id, str):
            spend[source_id] = usd
        elif state == "failed" and is_safe_integer(failed_at) and failed_at > 0:
            failures.append((float(failed_at), usd))
    days: dict[int, RunDay] = {}

    def day_of(moment: float) -> RunDay:
        return days.setdefault(int(moment // DAY_MS), RunDay())

    seen: set[str] = set()
    for at, reason in await store.query(
        "SELECT json_extract(data, '$.at'), json_extract(data, '$.reason') FROM events "
        "WHERE json_valid(data) AND json_extract(data, '$.actor') = 'model' "
        "AND (? = '' OR scope = ?) ORDER BY rowid",
        (scope, scope),
    ):
        moment = parse_ms(at)
        source_id = run_source(reason)
        if moment is None or not start <= moment <= end or source_id is None:
            continue
        day = day_of(moment)
        day.done += 1
        usd = spend.get(source_id)
        if usd is not None and source_id not in seen:  # its diagnostic is its last run's
            seen.add(source_id)
            day.usd += usd
            day.priced += 1
    for moment, usd in failures:
        if not start <= moment <= end:
            continue
        day = day_of(moment)
        day.failed += 1
        if usd is not None:
            day.usd += usd
            day.priced += 1
    return days
