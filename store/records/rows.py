"""Turning raw SQLite rows into typed records, or into corrupt-row reports."""

from __future__ import annotations

import json
from sys import intern
from typing import Any

from ..js import fp, js_whole
from .decode import listed_fast
from .model import CorruptRow, Event, Evidence, Memory, ModelCall, Signal, Source, StoredMemory
from .validate import event_problem, record_problem

# §2.8.6: fixed pause terms; the budget terms come from recovery.json (defaults here).
PAUSING_CODES = frozenset(("write_rejected", "unavailable", "safety"))
DEFAULT_SOURCE_CALLS = 4
DEFAULT_SOURCE_TIME_MS = 300_000


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(raw: str | bytes) -> Any:
    """``JSON.parse``: the json module without the NaN and Infinity it alone accepts."""
    return json.loads(raw, parse_constant=_no_constant)


def _interned(value: str | None) -> str | None:
    return None if value is None else intern(value)


def signal_of(feedback: Any, slot: str) -> Signal | None:
    """The verdict in ``slot`` of a record's ``feedback`` object, typed (None: none)."""
    if not isinstance(feedback, dict):
        return None
    s = feedback.get(slot)
    if not isinstance(s, dict):
        return None
    return Signal(
        verdict=intern(s["verdict"]),
        source_id=intern(s.get("sourceId", "")),
        at=intern(s.get("at", "")),
    )


def _fields(data: dict[str, Any], now_ms: float) -> tuple[Any, ...]:
    """The typed fields of an already validated record dict.

    ``json.loads`` makes a fresh string for every value, and at 100,000 records the
    copies of equal values would cost tens of megabytes. So the values that repeat are
    interned: the words of small vocabularies (kind, status, layer, origin, evidence
    basis and method, verdicts), the times (a learning run stamps many records with
    one time; evidence is usually as old as the record) and the source ids (evidence
    usually names the record's own source entry).
    """
    ev = data.get("evidence")
    evidence = (
        Evidence(
            basis=intern(ev["basis"]),
            method=intern(ev["method"]),
            source_id=intern(ev["sourceId"]),
            at=intern(ev["at"]),
        )
        if isinstance(ev, dict)
        else None
    )
    feedback = data.get("feedback")
    return (  # in the order of Memory's fields
        data["id"],
        intern(data["kind"]),
        data["content"],
        intern(data["scope"]),
        intern(data["sourceEntryId"]),
        intern(data["createdAt"]),
        intern(data["updatedAt"]),
        js_whole(data["revision"]),
        intern(data["layer"]),
        intern(data["status"]),
        evidence,
        signal_of(feedback, "utility"),
        signal_of(feedback, "accuracy"),
        tuple(data.get("searchTerms") or ()),
        tuple(data.get("suppressedHashes") or ()),
        _interned(data.get("reinforcedAt")),
        now_ms,  # one float for the whole read: its quality is computed when asked
    )


def memory_from_data(data: dict[str, Any], now_ms: float) -> StoredMemory:
    """A typed record, with its stored object, from an already validated record dict."""
    return StoredMemory(*(*_fields(data, now_ms), data))


def listed_from_data(data: dict[str, Any], now_ms: float) -> Memory:
    """A typed record without its stored object (what a list of many keeps)."""
    return Memory(*_fields(data, now_ms))


def _problem(data: Any, row_id: str, scope: str, hash_: str) -> str | None:
    """Why a parsed ``memories`` row fails upstream's read checks (§2.2.2), or None."""
    problem = record_problem(data)
    if problem is None:
        if data["id"] != row_id:
            problem = "id column does not match the record"
        elif data["scope"] != scope:
            problem = "scope column does not match the record"
        elif fp(data["content"]) != hash_:
            problem = "hash column is not the fingerprint of the content"
    return problem


def _validated(row_id: str, scope: str, hash_: str, raw: str) -> dict[str, Any] | CorruptRow:
    """Validate one ``memories`` row as upstream does on every read (§2.2.2)."""
    try:
        data = loads(raw)
    except (ValueError, TypeError, RecursionError) as exc:
        return CorruptRow("memories", str(row_id), f"data is not JSON ({exc})", str(raw))
    problem = _problem(data, row_id, scope, hash_)
    if problem is not None:
        return CorruptRow("memories", str(row_id), problem, str(raw))
    return data  # type: ignore[no-any-return]


def parse_memory_row(
    row_id: str, scope: str, hash_: str, raw: str, now_ms: float
) -> StoredMemory | CorruptRow:
    """One ``memories`` row, validated, typed and with its stored object."""
    data = _validated(row_id, scope, hash_, raw)
    return data if isinstance(data, CorruptRow) else memory_from_data(data, now_ms)


def parse_listed_row(
    row_id: str, scope: str, hash_: str, raw: str, now_ms: float
) -> Memory | CorruptRow:
    """One ``memories`` row, validated and typed, its stored object let go.

    msgspec decodes and checks it in one pass (``decode.listed_fast``). A row it does
    not find valid is read in full by the json module, and ``record_problem`` gives
    upstream's reason: the outcome is the same for every text as the json module
    alone gives. A stored object kept for writing back is always ``loads``'s, so no
    number in it changes.
    """
    fast = listed_fast(row_id, scope, hash_, raw, now_ms)
    if fast is not None:
        return fast
    checked = _validated(row_id, scope, hash_, raw)
    return checked if isinstance(checked, CorruptRow) else listed_from_data(checked, now_ms)


def parse_event_row(rowid: int, row_id: str, scope: str, raw: str) -> Event | CorruptRow:
    try:
        data = loads(raw)
    except (ValueError, TypeError, RecursionError) as exc:
        return CorruptRow("events", str(row_id), f"data is not JSON ({exc})", str(raw))
    problem = event_problem(data, row_id, scope)
    if problem is not None:
        return CorruptRow("events", str(row_id), problem, str(raw))
    return Event(
        rowid=rowid,
        id=data["id"],
        at=data["at"],
        actor=data["actor"],
        reason=data["reason"],
        scope=data["scope"],
        before=tuple(data["before"]),
        after=tuple(data["after"]),
        data=data,
    )


def _json_or(raw: Any, default: Any) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, TypeError, RecursionError):
        return default


def is_paused(
    state: str,
    failures: int,
    output_failures: int,
    last_error: str,
    calls: int,
    call_ms: int,
    source_calls: int = DEFAULT_SOURCE_CALLS,
    source_time_ms: int = DEFAULT_SOURCE_TIME_MS,
) -> bool:
    """§2.8.6, exactly."""
    if state not in ("pending", "failed"):
        return False
    return (
        failures >= 5
        or output_failures >= 3
        or last_error in PAUSING_CODES
        or calls >= source_calls
        or call_ms >= source_time_ms
    )


SOURCE_COLUMNS = (
    "rowid, id, data, state, attempt, lease, failures, retry_at, failed_at, last_error, "
    "output_failures, diagnostic, calls, call_ms, call_models, last_checked, corrections"
)


def parse_source_row(
    row: tuple[Any, ...],
    source_calls: int = DEFAULT_SOURCE_CALLS,
    source_time_ms: int = DEFAULT_SOURCE_TIME_MS,
) -> Source | CorruptRow:
    """A ``sources`` row; its paused flag by the policy's per-source limits (§2.8.6)."""
    (
        rowid,
        sid,
        raw,
        state,
        attempt,
        lease,
        failures,
        retry_at,
        failed_at,
        last_error,
        output_failures,
        diagnostic,
        calls,
        call_ms,
        call_models,
        last_checked,
        corrections,
    ) = row
    data = _json_or(raw, None)
    if not isinstance(data, dict) or data.get("id") != sid:
        return CorruptRow("sources", str(sid), "source JSON is invalid or its id differs", str(raw))
    diag = _json_or(diagnostic, {})
    models = _json_or(call_models, [])
    targets = data.get("targets")
    return Source(
        rowid=rowid,
        id=sid,
        scope=str(data.get("scope", "")),
        kind=str(data.get("kind", "")),
        content=str(data.get("content", "")),
        created_at=str(data.get("createdAt", "")),
        targets=tuple(str(t) for t in targets) if isinstance(targets, list) else (),
        state=state,
        attempt=attempt,
        lease=lease,
        failures=failures,
        retry_at=retry_at,
        failed_at=failed_at,
        last_error=last_error,
        output_failures=output_failures,
        diagnostic=diag if isinstance(diag, dict) else {},
        calls=calls,
        call_ms=call_ms,
        call_models=tuple(str(m) for m in models) if isinstance(models, list) else (),
        last_checked=last_checked,
        corrections=corrections,
        paused=is_paused(
            state,
            failures,
            output_failures,
            last_error,
            calls,
            call_ms,
            source_calls,
            source_time_ms,
        ),
        data=data,
    )


MODEL_CALL_COLUMNS = (
    "source_id, attempt, model, provider, at, outcome, finished_at, code, "
    "reserved_usd, charged_usd, input_tokens, output_tokens"
)


def parse_model_call(row: tuple[Any, ...]) -> ModelCall:
    return ModelCall(*row)
