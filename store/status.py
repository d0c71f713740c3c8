"""The status figures of STORE.md §5.9, computed the way upstream computes them.

Where upstream's ``status()`` throws on the first failing whole-database check
(§2.13), this report lists every problem found, so a dashboard can show them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .model import CorruptRow, Event, ModelCall, Source
from .rows import DEFAULT_SOURCE_CALLS, DEFAULT_SOURCE_TIME_MS, MODEL_CALL_COLUMNS
from .store import MemoryStore

HOUR_MS = 3_600_000
DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class StatusReport:
    now_ms: int
    memory_rows: int
    memories_by_status: dict[str, int]
    sources_by_state: dict[str, int]
    schema: str
    legacy_import: str
    problems: tuple[str, ...]
    # recovery report
    failed_or_paused: int
    paused: int
    retrying: int
    failing: tuple[Source, ...]
    backoff_waiting: int
    next_eligible: int | None
    failure_classes: dict[str, int]
    # routing report
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
    # processing report
    recent_model_events: tuple[Event, ...]


async def status(store: MemoryStore, *, calls_per_hour: int = 20) -> StatusReport:
    now = int(store.now_ms())
    problems: list[str] = []
    meta = await store.metadata()
    if meta.get("schema") != "7":
        problems.append(f"schema marker is {meta.get('schema')!r}, not '7'")
    legacy = meta.get("legacy_import", "")
    try:
        legacy_state = str(json.loads(legacy).get("state", "unknown"))
    except (ValueError, AttributeError):
        legacy_state = "invalid"
        problems.append("Invalid legacy import metadata")

    load = await store.load_memories()
    by_status: dict[str, int] = {}
    for m in load.memories:
        by_status[m.status] = by_status.get(m.status, 0) + 1
    for c in load.corrupt:
        problems.append(f"memory {c.id}: {c.reason}")
    memory_rows = len(load.memories) + len(load.corrupt)

    states = await store.query("SELECT state, count(*) FROM sources GROUP BY state")
    sources_by_state = {str(s): int(n) for s, n in states}
    sources = await store.sources()
    good_sources = [s for s in sources if isinstance(s, Source)]
    for bad in sources:
        if isinstance(bad, CorruptRow):
            problems.append(f"source {bad.id}: {bad.reason}")

    failing = [
        s for s in good_sources if s.state == "failed" or (s.state == "pending" and s.paused)
    ]
    paused = [s for s in good_sources if s.paused]
    failing_sorted = sorted(failing, key=lambda s: (s.failed_at, s.rowid), reverse=True)
    waiting = [s for s in good_sources if s.state == "pending" and s.retry_at > now]
    classes: dict[str, int] = {}
    for s in failing:
        code = s.last_error or "unknown"
        classes[code] = classes.get(code, 0) + 1

    events = await store.events(limit=None)
    for e in events:
        if isinstance(e, CorruptRow):
            problems.append(f"event {e.id}: {e.reason}")
    model_events = [e for e in events if isinstance(e, Event) and e.actor == "model"][:5]

    calls_hour = await store.query(
        "SELECT count(*) FROM model_calls WHERE at > ?", (now - HOUR_MS,)
    )
    window = await store.query(
        "SELECT count(*), coalesce(sum(coalesce(charged_usd, reserved_usd, 0)), 0), "
        "sum(charged_usd IS NULL AND reserved_usd IS NULL), coalesce(sum(input_tokens), 0), "
        "coalesce(sum(output_tokens), 0) FROM model_calls WHERE at > ?",
        (now - DAY_MS,),
    )
    count24, usd24, unknown24, in24, out24 = window[0]
    routes = await store.query(
        "SELECT id, code, until FROM route_health WHERE until > ? ORDER BY until LIMIT 10", (now,)
    )
    recent = await store.query(
        f"SELECT {MODEL_CALL_COLUMNS} FROM model_calls ORDER BY at DESC, rowid DESC LIMIT 5"
    )
    return StatusReport(
        now_ms=now,
        memory_rows=memory_rows,
        memories_by_status=by_status,
        sources_by_state=sources_by_state,
        schema=meta.get("schema", "?"),
        legacy_import=legacy_state,
        problems=tuple(problems),
        failed_or_paused=len(failing),
        paused=len(paused),
        retrying=len(failing) - len(paused),
        failing=tuple(failing_sorted[:5]),
        backoff_waiting=len(waiting),
        next_eligible=min((s.retry_at for s in waiting), default=None),
        failure_classes=classes,
        source_calls_limit=DEFAULT_SOURCE_CALLS,
        source_time_limit_ms=DEFAULT_SOURCE_TIME_MS,
        calls_last_hour=int(calls_hour[0][0]),
        calls_per_hour_limit=calls_per_hour,
        calls_last_24h=int(count24),
        usd_last_24h=float(usd24),
        unknown_cost_calls=int(unknown24 or 0),
        input_tokens_24h=int(in24),
        output_tokens_24h=int(out24),
        cooling_routes=tuple((str(i), str(c), int(u)) for i, c, u in routes),
        recent_attempts=tuple(ModelCall(*r) for r in recent),
        recent_model_events=tuple(model_events),
    )
