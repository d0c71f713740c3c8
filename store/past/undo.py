"""One event undone onto the reconstruction of the past: it must follow from what
the walk has built so far (``past.py``'s "Never guess"), or the walk stops there."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..js import parse_ms
from ..records.decode import befores_fast
from ..records.model import Memory, Signal
from ..records.rows import listed_from_data, signal_of
from ..records.validate import event_problem
from .events import Row, Typed, _parsed


def _same_signal(signal: Signal | None, feedback: Any, slot: str) -> bool:
    """``signal`` is the verdict in ``slot`` of a stored, unchecked ``feedback``."""
    try:
        return signal_of(feedback, slot) == signal
    except (KeyError, TypeError):  # not a verdict pi could have written
        return False


def follows(record: Memory, data: dict[str, Any]) -> bool:
    """The stored record ``data`` is ``record`` on every field in ``LOGGED``, compared
    without typing ``data`` first (a walk checks every event's ``after`` this way)."""
    g = data.get
    return (
        g("id") == record.id
        and g("content") == record.content
        and g("updatedAt") == record.updated_at
        and g("revision") == record.revision
        and g("status") == record.status
        and g("layer") == record.layer
        and g("kind") == record.kind
        and g("scope") == record.scope
        and g("createdAt") == record.created_at
        and tuple(g("searchTerms") or ()) == record.search_terms
        and tuple(g("suppressedHashes") or ()) == record.suppressed_hashes
        and _same_signal(record.utility, g("feedback"), "utility")
        and _same_signal(record.accuracy, g("feedback"), "accuracy")
    )


def _created_after(created_at: str, shown_iso: str, shown: float) -> bool:
    """``created_at`` is after the moment ``shown`` (``shown_iso``: the same, as pi writes
    times, which then compare as text)."""
    if len(created_at) == 24 and created_at[-1] == "Z":
        return created_at > shown_iso
    created = parse_ms(created_at)
    return created is not None and created > shown


def _undo(
    event_id: object,
    scope: object,
    raw: object,
    overlay: dict[str, Memory | None],
    now: Mapping[str, Row],
    typed: Typed,
) -> str | list[tuple[str, int, Memory | None, str | None]]:
    """Undo one event into ``overlay``: each record it changed (its id, its place in the
    event's arrays, what it was before, and the stamp it wrote), or why it cannot be."""
    fast = befores_fast(raw, str(event_id), str(scope), 0.0) if typed is listed_from_data else None
    if fast is not None:  # the one-pass reading said yes: the befores are typed
        return _undone(*fast, overlay, now)
    try:
        data: Any = _parsed(raw)
    except (ValueError, TypeError, RecursionError):
        return "not JSON"
    problem = event_problem(data, str(event_id), str(scope), after_records=False)
    if problem is not None:
        return problem
    when = 0.0  # quality is taken at the end, for the moment shown
    befores = [None if b is None else typed(b, when) for b in data["before"]]
    return _undone(befores, data["after"], overlay, now)


def _undone(
    befores: Sequence[Memory | None],
    afters: Sequence[dict[str, Any]],
    overlay: dict[str, Memory | None],
    now: Mapping[str, Row],
) -> str | list[tuple[str, int, Memory | None, str | None]]:
    """``_undo``'s second half, on a valid event's typed befores and stored afters."""
    changes: list[tuple[str, int, Memory | None, str | None]] = []
    for slot, (was, after) in enumerate(zip(befores, afters, strict=True)):
        record_id = after["id"]
        current = overlay[record_id] if record_id in overlay else now.get(record_id)
        if not isinstance(current, Memory) or not follows(current, after):
            return f"its change to {record_id} does not lead to the record as it is later"
        stamp = after.get("reinforcedAt")
        changes.append((record_id, slot, was, stamp if isinstance(stamp, str) else None))
    for record_id, _, was, _ in changes:
        overlay[record_id] = was
    return changes
