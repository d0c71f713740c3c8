"""What changed between two moments of the past: the records added, changed and
removed, field by field."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..records.model import Memory
from .events import LOGGED, Row

if TYPE_CHECKING:
    from .past import Past

FIELD_NAMES = {
    "kind": "kind",
    "content": "content",
    "scope": "scope",
    "created_at": "createdAt",
    "updated_at": "updatedAt",
    "revision": "revision",
    "layer": "layer",
    "status": "status",
    "utility": "feedback.utility",
    "accuracy": "feedback.accuracy",
    "search_terms": "searchTerms",
    "suppressed_hashes": "suppressedHashes",
    "evidence": "evidence",
}
"""Each compared field as the stored record names it."""


DIFFED = (*LOGGED, "evidence")
"""What a diff compares: the logged fields, and ``evidence``, which pi may also move
without an event, but which an event that carries it (a correction's) changes in the
reconstruction; so a difference in it is one the log recorded."""


def changed_fields(a: Memory, b: Memory) -> dict[str, tuple[Any, Any]]:
    """The fields ``a`` and ``b`` differ in (stored names), with both values."""
    return {
        FIELD_NAMES[f]: (getattr(a, f), getattr(b, f))
        for f in DIFFED
        if getattr(a, f) != getattr(b, f)
    }


@dataclass(frozen=True, slots=True)
class Change:
    """One record that existed at both moments and differs between them."""

    start: Memory
    end: Memory
    fields: dict[str, tuple[Any, Any]]


@dataclass(frozen=True, slots=True)
class Diff:
    """The records added, changed and removed between two moments."""

    start: float
    end: float
    added: tuple[Memory, ...]
    """Records that exist at ``end`` and did not at ``start``."""
    changed: tuple[Change, ...]
    removed: tuple[Memory, ...]
    """Records that existed at ``start`` and not at ``end`` (as they were at ``start``)."""


def diff(start: Past, end: Past) -> Diff:
    """The difference between the records at ``start.when`` and at ``end.when``, on the
    fields the event log records (in ``end``'s order, then ``start``'s)."""
    before = by_id(start.rows)
    after = by_id(end.rows)
    changed = []
    for record_id, now in after.items():
        was = before.get(record_id)
        if was is not None and (fields := changed_fields(was, now)):
            changed.append(Change(was, now, fields))
    return Diff(
        start=start.when,
        end=end.when,
        added=tuple(m for i, m in after.items() if i not in before),
        changed=tuple(changed),
        removed=tuple(m for i, m in before.items() if i not in after),
    )


def by_id(rows: Iterable[Row]) -> dict[str, Memory]:
    return {r.id: r for r in rows if isinstance(r, Memory)}
