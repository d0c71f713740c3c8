"""What the memory list shows: filtering and sorting, as pure functions over typed rows.

A filter is typed as one line (``filters.py``): free words match the content,
id, origin and search terms (all words must match, case-insensitively);
``key:value`` tokens narrow by field, with commas for alternatives:

    kind:fact,decision  status:confirmed  origin:webshop  state:dormant  is:pinned
    src:<source id>   (records created or last replaced by that source)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any

from store import STATUSES, CorruptRow, Memory, confirmed_ms, evidence_weight, parse_ms

from .filters import Field, parse
from .glyphs import KIND_LABELS, time_left

Row = Memory | CorruptRow

HIDDEN_STATUSES = frozenset(("forgotten", "conflicted"))
KIND_NAMES = {label: kind for kind, label in KIND_LABELS.items()} | {k: k for k in KIND_LABELS}
STATES = ("fresh", "aging", "dormant", "pinned", "forgotten", "conflicted", "disputed")
FIELDS = (
    Field("kind", ("k",), KIND_NAMES),
    Field("status", ("st",), {s: s for s in STATUSES}),
    Field("origin", ("o", "scope")),
    Field("state", ("s",), {s: s for s in STATES}),
    Field("is", (), {s: s for s in (*STATES, "unpinned")}),
    Field("source", ("src",), whole=True),
    Field("id", ()),
    Field("injected", ("inj",)),
)
"""The memory list's filter tokens."""
_COUNT = re.compile(r"(>=|<=|>|<|=)?(\d{1,9})")
NOT_REPLAYED = "injected: needs pi's sessions replayed first (n shows the Turns)"


@dataclass(frozen=True, slots=True)
class Filter:
    words: tuple[str, ...] = ()
    kinds: frozenset[str] = frozenset()
    statuses: frozenset[str] = frozenset()
    origins: tuple[str, ...] = ()
    states: frozenset[str] = frozenset()
    pinned: bool | None = None
    errors: tuple[str, ...] = field(default=())
    sources: tuple[str, ...] = ()
    ids: frozenset[str] = frozenset()
    injected: tuple[tuple[str, int], ...] = ()
    """How many replayed turns injected it: (comparison, count) pairs, all to hold."""

    @property
    def names_hidden(self) -> bool:
        """True when the filter itself asks for forgotten or conflicted records."""
        asked = self.statuses | self.states
        return bool(asked & HIDDEN_STATUSES or "disputed" in asked)


def parse_filter(query: str) -> Filter:
    q = parse(query, FIELDS)
    counts: list[tuple[str, int]] = []
    errors = list(q.errors)
    for value in q.values("injected"):
        found = _COUNT.fullmatch(value)
        if found is None:
            errors.append(f"injected: {value!r} is not a count (0, >10, <=3)")
        else:
            counts.append((found[1] or "=", int(found[2])))
    is_ = q.get("is")
    pinned = True if "pinned" in is_ else False if "unpinned" in is_ else None
    states = q.get("state") | (is_ - {"pinned", "unpinned"})
    return Filter(
        q.words,
        q.get("kind"),
        q.get("status"),
        q.values("origin"),
        states,
        pinned,
        tuple(errors),
        q.values("source"),
        q.get("id"),
        tuple(counts),
    )


def origin_name(scope: str) -> str:
    return PurePosixPath(scope).name or scope


def haystack(m: Memory) -> str:
    return " ".join((m.content, m.id, m.scope, *m.search_terms)).casefold()


_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "=": lambda a, b: a == b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
}


def matches(
    m: Memory,
    f: Filter,
    cache: dict[str, str] | None = None,
    injected: Mapping[str, int] | None = None,
) -> bool:
    """Does the record pass the filter (``injected``: how many replayed turns injected
    each record, for ``injected:``)?"""
    if f.ids and m.id not in f.ids:
        return False
    if f.injected:
        n = (injected or {}).get(m.id, 0)
        if not all(_COMPARE[op](n, count) for op, count in f.injected):
            return False
    if f.kinds and m.kind not in f.kinds:
        return False
    if f.statuses and m.status not in f.statuses:
        return False
    if f.states and m.state not in f.states:
        return False
    if f.pinned is not None and m.pinned != f.pinned:
        return False
    if f.origins and not any(o in m.scope.casefold() for o in f.origins):
        return False
    if f.sources and not any(
        src in (m.source_entry_id, m.evidence.source_id if m.evidence else "") for src in f.sources
    ):
        return False
    if f.words:
        if cache is not None:
            text = cache.get(m.id)
            if text is None:
                text = cache[m.id] = haystack(m)
        else:
            text = haystack(m)
        return all(w in text for w in f.words)
    return True


def _feedback_rank(m: Memory) -> int:
    score = 0
    if m.utility is not None:
        score += 1 if m.utility.verdict == "useful" else -1
    if m.accuracy is not None:
        score += 2 if m.accuracy.verdict == "accurate" else -2
    return score


STATE_ORDER = {
    s: i
    for i, s in enumerate(
        ("pinned", "fresh", "aging", "dormant", "disputed", "conflicted", "forgotten")
    )
}


def _days_left(m: Memory) -> float:
    """Days until it goes dormant: the fewest first is the most urgent (a pinned record,
    which never goes dormant, last)."""
    left = m.days_until_dormant
    return math.inf if left is None else left


SortKey = Any
"""A record's place under a sort: a number or a string, compared with ``<``."""

SORT_KEYS: dict[str, tuple[str, Callable[[Memory], SortKey]]] = {
    "updated": ("updated", lambda m: parse_ms(m.updated_at) or 0.0),
    "confirmed": ("confirmed", lambda m: confirmed_ms(m.updated_at, m.reinforced_at)),
    "fresh": ("days left before dormancy", _days_left),
    "state": ("state", lambda m: STATE_ORDER.get(m.state, 99)),
    "kind": ("kind", lambda m: m.kind),
    "status": ("status", lambda m: m.status),
    "origin": ("origin", lambda m: origin_name(m.scope).casefold()),
    "evidence": (
        "evidence",
        lambda m: evidence_weight(m.kind, m.evidence.basis if m.evidence else None),
    ),
    "feedback": ("feedback", _feedback_rank),
    "content": ("content", lambda m: m.content.casefold()),
    "share": ("share of its horizon left", time_left),
    "injected": ("injected in turns (pi's sessions replayed)", lambda m: 0),
    "last_injected": ("last injected (pi's sessions replayed)", lambda m: 0.0),
}
BY_RECALL_LOG = frozenset(("injected", "last_injected"))
"""The sorts read from the recall log (``sort_key`` keys them; else every record ties)."""
SORT_ORDER = tuple(SORT_KEYS)
SORTS = tuple(key for key in SORT_ORDER if key != "share")
"""The sorts the memory list's menu and the palette offer."""
DEFAULT_DESCENDING = frozenset(
    ("updated", "confirmed", "share", "evidence", "feedback", "injected", "last_injected")
)


def sort_key(
    sort: str,
    injected: Mapping[str, int] | None = None,
    last: Mapping[str, float] | None = None,
) -> Callable[[Memory], SortKey]:
    """The key of the sort ``sort``; ``injected``, ``last``: each record's count of
    replayed turns that injected it, and the last one's moment (the recall log)."""
    if sort == "injected":
        counts = injected or {}
        return lambda m: counts.get(m.id, 0)
    if sort == "last_injected":
        moments = last or {}
        return lambda m: moments.get(m.id, 0.0)
    return SORT_KEYS[sort][1]


@dataclass(frozen=True, slots=True)
class View:
    query: str = ""
    show_hidden: bool = False
    sort: str = "updated"
    descending: bool = True


def apply_view(
    rows: Iterable[Row],
    view: View,
    cache: dict[str, str] | None = None,
    injected: Mapping[str, int] | None = None,
) -> tuple[list[Row], Filter]:
    """The rows to show, in order: corrupt rows first (always visible), then matches."""
    listed, f, _ = order_view(rows, view, cache, injected)
    return listed, f


def order_view(
    rows: Iterable[Row],
    view: View,
    cache: dict[str, str] | None = None,
    injected: Mapping[str, int] | None = None,
    last: Mapping[str, float] | None = None,
) -> tuple[list[Row], Filter, dict[str, SortKey]]:
    """``apply_view``, with each shown record's sort key by id (``insertion_point``
    places a record arriving later among them without sorting again). ``injected``:
    each record's count of replayed turns that injected it (None: not replayed);
    ``last``: the moment of the last one (the ``last_injected`` sort)."""
    f = parse_filter(view.query)
    if f.injected and injected is None:
        f = replace(f, errors=(*f.errors, NOT_REPLAYED))
    if f.errors:  # a typo matches nothing, rather than everything
        return [], f, {}
    show_hidden = view.show_hidden or f.names_hidden
    corrupt: list[Row] = []
    shown: list[Memory] = []
    for row in rows:
        if isinstance(row, CorruptRow):
            if not f.words or any(w in (row.id + row.reason).casefold() for w in f.words):
                corrupt.append(row)
        elif (show_hidden or row.status not in HIDDEN_STATUSES) and matches(
            row, f, cache, injected
        ):
            shown.append(row)
    key = sort_key(view.sort, injected, last)
    made = [key(m) for m in shown]  # each key made once, not once per comparison
    keys = {m.id: k for m, k in zip(shown, made, strict=True)}
    return [*corrupt, *_ordered(shown, made, view.descending)], f, keys


def _ordered(shown: list[Memory], made: list[SortKey], descending: bool) -> list[Memory]:
    """``shown`` by their keys ``made`` (descending: largest first), ties by id: one
    sort by key, then each run of equal keys by id (at 100,000 records, a sort of
    every record by id first cost as much as the sort by key)."""
    order = sorted(range(len(shown)), key=made.__getitem__, reverse=descending)
    out = [shown[i] for i in order]
    ranked = [made[i] for i in order]
    start, n = 0, len(out)
    while start < n:
        end, here = start + 1, ranked[start]
        while end < n and ranked[end] == here:
            end += 1
        if end - start > 1:
            out[start:end] = sorted(out[start:end], key=_by_id)
        start = end
    return out


def _by_id(m: Memory) -> str:
    return m.id


def insertion_point(
    listed: Sequence[Row],
    keys: dict[str, SortKey],
    record: Memory,
    view: View,
    key_of: Callable[[Memory], SortKey] | None = None,
) -> int:
    """Where ``record`` goes in ``listed`` (as ``order_view`` orders it: corrupt rows
    first, then by sort key, ties by id), by a binary search; ``keys``: the sort key
    of each listed record, as ``order_view`` gave them (a record not in it is keyed
    now, by ``key_of``: default the sort's own key)."""
    keyed = key_of or sort_key(view.sort)
    key, rid, descending = keyed(record), record.id, view.descending
    lo, hi = 0, len(listed)
    while lo < hi:
        mid = (lo + hi) // 2
        row = listed[mid]
        if isinstance(row, CorruptRow):
            lo = mid + 1  # corrupt rows stay on top
            continue
        other = keys[row.id] if row.id in keys else keyed(row)
        if other == key:
            before = row.id < rid
        else:
            before = other > key if descending else other < key
        if before:
            lo = mid + 1
        else:
            hi = mid
    return lo
