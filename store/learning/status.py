"""The status figures of STORE.md §5.9, computed the way upstream computes them.

Where upstream's ``status()`` throws on the first failing whole-database check
(§2.13), this report lists every problem found, so a dashboard can show them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..errors import StoreError
from ..js import is_safe_integer, js_number
from ..records.model import CorruptRow, Event, ModelCall, Source
from ..records.rows import MODEL_CALL_COLUMNS
from ..store import MemoryStore
from .budget import Budget, budget_status
from .policy import Policy

HOUR_MS = 3_600_000
DAY_MS = 86_400_000
OBSOLETE_FILES = (
    "agenda_candidates.yaml",
    "self_agenda.yaml",
    "signals.jsonl",
    "evolution_journal.md",
)


@dataclass(frozen=True, slots=True)
class QueueStatus:
    """The learning queue, routing and spend: the recovery and routing reports of 5.9.

    Cheap to compute (sources, model calls and route health only), so a live view
    can refresh it often.
    """

    now_ms: int
    sources_by_state: dict[str, int]
    failed_or_paused: int
    paused: int
    retrying: int
    failing: tuple[Source, ...]
    backoff_waiting: int
    next_eligible: int | None
    failure_classes: dict[str, int]
    source_calls_limit: int
    source_time_limit_ms: int
    calls_last_hour: int
    calls_per_hour_limit: int
    calls_last_24h: int
    usd_last_24h: float
    unknown_cost_calls: int
    input_tokens_24h: int
    output_tokens_24h: int
    cooling_routes: tuple[tuple[str, str, int], ...]
    recent_attempts: tuple[ModelCall, ...]
    calls_per_hour: tuple[int, ...]
    """Model calls reserved in each of the last 24 hours, oldest first."""
    failures_per_hour: tuple[int, ...]
    """Model calls that failed in each of the last 24 hours, oldest first."""
    problems: tuple[str, ...]
    policy: Policy
    """The routing and budget policy the limits come from (``recovery.json``)."""
    budget: Budget
    """The budget line: may the next learning call go now?"""
    pruned_before: int | None = None
    """pi keeps model calls 24 h: each call it reserves prunes those 24 h older than it.
    As of a moment whose window reaches before the newest call's prune line, the calls
    counted are a lower bound; this is that line (None: the window is whole)."""


@dataclass(frozen=True, slots=True)
class StatusReport:
    """``status()``: the whole-database checks and figures, and the queue."""

    now_ms: int
    memory_rows: int
    memories_by_status: dict[str, int]
    schema: str
    legacy_import: str
    problems: tuple[str, ...]
    recent_model_events: tuple[Event, ...]
    queue: QueueStatus
    legacy_count: int | None = None
    """Records the legacy import brought in (``completed`` imports)."""
    obsolete_files: tuple[str, ...] = ()
    """Files of older versions present in the state directory (§1.1), never read."""
    state_dir: str = ""


async def queue_status(store: MemoryStore) -> QueueStatus:
    """The queue figures, with the limits of the store's policy (``recovery.json``)."""
    now = int(store.now_ms())
    states = await store.query("SELECT state, count(*) FROM sources GROUP BY state")
    sources = await store.sources()
    good = [s for s in sources if isinstance(s, Source)]
    problems = [f"source {b.id}: {b.reason}" for b in sources if isinstance(b, CorruptRow)]
    failing = [s for s in good if s.state == "failed" or (s.state == "pending" and s.paused)]
    paused = [s for s in good if s.paused]
    waiting = [s for s in good if s.state == "pending" and s.retry_at > now]
    classes: dict[str, int] = {}
    for s in failing:
        code = s.last_error or "unknown"
        classes[code] = classes.get(code, 0) + 1
    calls_hour = await store.query(
        "SELECT count(*) FROM model_calls WHERE at > ? AND at <= ?", (now - HOUR_MS, now)
    )
    window = await store.query(
        "SELECT count(*), coalesce(sum(coalesce(charged_usd, reserved_usd, 0)), 0), "
        "sum(charged_usd IS NULL AND reserved_usd IS NULL), coalesce(sum(input_tokens), 0), "
        "coalesce(sum(output_tokens), 0) FROM model_calls WHERE at > ? AND at <= ?",
        (now - DAY_MS, now),
    )
    count24, usd24, unknown24, in24, out24 = window[0]
    routes = await store.query(
        "SELECT id, code, until FROM route_health WHERE until > ? ORDER BY until LIMIT 10", (now,)
    )
    recent = await store.query(
        f"SELECT {MODEL_CALL_COLUMNS} FROM model_calls WHERE at <= ? "
        "ORDER BY at DESC, rowid DESC LIMIT 5",
        (now,),
    )
    activity = await store.query(
        "SELECT at, outcome, finished_at FROM model_calls "
        "WHERE (at > ? AND at <= ?) OR (finished_at > ? AND finished_at <= ?)",
        (now - DAY_MS, now, now - DAY_MS, now),
    )
    calls_hourly = [0] * 24
    failures_hourly = [0] * 24
    for at, outcome, finished_at in activity:
        if now - DAY_MS < at <= now:
            calls_hourly[min(23, max(0, 23 - (now - int(at)) // HOUR_MS))] += 1
        if outcome == "failed" and finished_at is not None and now - DAY_MS < finished_at <= now:
            failures_hourly[min(23, max(0, 23 - (now - int(finished_at)) // HOUR_MS))] += 1
    return QueueStatus(
        now_ms=now,
        sources_by_state={str(k): int(n) for k, n in states},
        failed_or_paused=len(failing),
        paused=len(paused),
        retrying=len(failing) - len(paused),
        failing=tuple(sorted(failing, key=lambda s: (s.failed_at, s.rowid), reverse=True)[:5]),
        backoff_waiting=len(waiting),
        next_eligible=min((s.retry_at for s in waiting), default=None),
        failure_classes=classes,
        source_calls_limit=store.policy.source_calls,
        source_time_limit_ms=store.policy.source_time_ms,
        calls_last_hour=int(calls_hour[0][0]),
        calls_per_hour_limit=store.policy.calls_per_hour,
        calls_last_24h=int(count24),
        usd_last_24h=float(usd24),
        unknown_cost_calls=int(unknown24 or 0),
        input_tokens_24h=int(in24),
        output_tokens_24h=int(out24),
        cooling_routes=tuple((str(i), str(c), int(u)) for i, c, u in routes),
        recent_attempts=tuple(ModelCall(*r) for r in recent),
        calls_per_hour=tuple(calls_hourly),
        failures_per_hour=tuple(failures_hourly),
        problems=tuple(problems),
        policy=store.policy,
        budget=await budget_status(store),
        pruned_before=await _pruned_before(store, now),
    )


async def _pruned_before(store: MemoryStore, now: int) -> int | None:
    """The moment before which pi has pruned model calls, when the 24 h before ``now``
    reach before it (``QueueStatus.pruned_before``)."""
    newest = (await store.query("SELECT max(at) FROM model_calls"))[0][0]
    if not isinstance(newest, int | float):
        return None
    line = int(newest) - DAY_MS
    return line if now - DAY_MS < line else None


async def status(store: MemoryStore) -> StatusReport:
    """Every check of 2.13 (reported, not raised) and the figures of 5.9."""
    now = int(store.now_ms())
    problems: list[str] = []
    meta = await store.metadata()
    if meta.get("schema") != "7":
        problems.append(f"schema marker is {meta.get('schema')!r}, not '7'")
    try:
        await store.check()
    except StoreError as exc:
        problems.append(f"Memory database integrity check failed: {exc}")
    legacy = meta.get("legacy_import", "")
    legacy_count: int | None = None
    try:
        marker = json.loads(legacy)
        legacy_state = str(marker.get("state", "unknown"))
        count = marker.get("count")
        if is_safe_integer(count) and (js_number(count) or 0) >= 0:  # pi: Number.isSafeInteger
            legacy_count = int(js_number(count) or 0)
        elif count is not None:
            problems.append("Invalid legacy import metadata")
    except (ValueError, AttributeError):
        legacy_state = "invalid"
        problems.append("Invalid legacy import metadata")
    state_dir = store.path.parent
    obsolete = tuple(name for name in OBSOLETE_FILES if (state_dir / name).exists())
    load = await store.load_memories()
    by_status: dict[str, int] = {}
    for m in load.memories:
        by_status[m.status] = by_status.get(m.status, 0) + 1
    problems.extend(f"memory {c.id}: {c.reason}" for c in load.corrupt)
    queue = await queue_status(store)
    problems.extend(queue.problems)
    events = await store.events(limit=None)
    problems.extend(f"event {e.id}: {e.reason}" for e in events if isinstance(e, CorruptRow))
    model_events = [e for e in events if isinstance(e, Event) and e.actor == "model"][:5]
    return StatusReport(
        now_ms=now,
        memory_rows=len(load.memories) + len(load.corrupt),
        memories_by_status=by_status,
        schema=meta.get("schema", "?"),
        legacy_import=legacy_state,
        problems=tuple(problems),
        recent_model_events=tuple(model_events),
        queue=queue,
        legacy_count=legacy_count,
        obsolete_files=obsolete,
        state_dir=str(state_dir),
    )
