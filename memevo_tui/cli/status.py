"""``status``: pi's ``/memory status`` report, line for line where STORE.md §5.9 gives
it (labels and order), then what memevo-tui adds."""

from __future__ import annotations

from typing import Any

from store._js import clip_bytes, iso, js_json
from store.model import FAILURE_CODES, Source
from store.recall import label
from store.redact import redact
from store.status import StatusReport

from ..text import one_line
from .output import Output


def status_json(r: StatusReport) -> dict[str, Any]:
    q = r.queue
    p = q.policy
    return {
        "memories": r.memory_rows,
        "byStatus": r.memories_by_status,
        "sources": q.sources_by_state,
        "schema": r.schema,
        "legacyImport": r.legacy_import,
        "retrying": q.retrying,
        "paused": q.paused,
        "failureClasses": q.failure_classes,
        "callsLastHour": q.calls_last_hour,
        "callsLast24h": q.calls_last_24h,
        "usdLast24h": round(q.usd_last_24h, 4),
        "unknownCostCalls": q.unknown_cost_calls,
        "inputTokens24h": q.input_tokens_24h,
        "outputTokens24h": q.output_tokens_24h,
        "coolingRoutes": [list(c) for c in q.cooling_routes],
        "policy": {
            "from": p.origin,
            "problem": p.problem,
            "crossProviderFallback": p.cross_provider_fallback,
            "fallbackModels": list(p.fallback_models),
            "callsPerHour": p.calls_per_hour,
            "sourceCalls": p.source_calls,
            "sourceModels": p.source_models,
            "timeoutMs": p.timeout_ms,
            "sourceTimeMs": p.source_time_ms,
            "dailyEstimatedUsd": p.daily_estimated_usd,
        },
        "budget": {
            "state": q.budget.state,
            "until": iso(q.budget.until) if q.budget.until is not None else None,
            "model": q.budget.model,
            "reason": q.budget.reason,
            "line": q.budget.line,
        },
        "problems": list(r.problems),
    }


def _source_row(s: Source, source_calls: int, source_time_ms: int) -> list[str]:
    code = s.last_error if s.last_error in FAILURE_CODES else "unknown"
    failed_at = iso(s.failed_at) if s.failed_at else "unknown (legacy)"
    head = (
        f"{clip_bytes(redact(s.id), 160)}: {code}; attempts={s.attempt}; "
        f"failures={s.failures}/5; outputFailures={s.output_failures}/3; "
        f"calls={s.calls}/{source_calls}; requestMs={s.call_ms}/{source_time_ms}; "
        f"failedAt={failed_at}; "
    )
    if s.paused:
        head += f"paused — needs a manual /memory evolve {clip_bytes(redact(s.id), 160)}"
    else:
        head += f"nextRetry={iso(s.retry_at) if s.retry_at else 'due now'}"
    return [head, f"  diagnostics={js_json(s.diagnostic)}"]


def pi_lines(r: StatusReport) -> list[str]:
    """The report's lines in pi's order."""
    q = r.queue
    p = q.policy
    states = ", ".join(f"{k}={v}" for k, v in q.sources_by_state.items()) or "no sources"
    check = "SQLite ok" if not r.problems else f"SQLite: {len(r.problems)} problem(s)"
    lines = [
        f"{r.memory_rows} memories; {states}; {check} (schema {r.schema})",
        f"State directory: {redact(r.state_dir)}",
        f"Recovery: retrying={q.retrying} paused={q.paused} (limits: failures 5, "
        "output failures 3)",
    ]
    for s in q.failing:
        lines += _source_row(s, p.source_calls, p.source_time_ms)
    if q.failed_or_paused > len(q.failing):
        lines.append(f"… {q.failed_or_paused - len(q.failing)} more")
    if q.backoff_waiting:
        nxt = iso(q.next_eligible) if q.next_eligible else "unknown"
        lines.append(f"Source-backoff waiting={q.backoff_waiting}; nextEligible={nxt}")
    ceiling = f"{p.daily_estimated_usd:g}" if p.daily_estimated_usd is not None else "disabled"
    lines += [
        f"Routing policy: {p.line}",
        f"Shared calls/hour={q.calls_last_hour}/{p.calls_per_hour}; last24h={q.calls_last_24h}; "
        f"catalog-estimated/reported USD={q.usd_last_24h:.4f}; "
        f"unknown-cost calls={q.unknown_cost_calls}; estimated daily ceiling={ceiling}",
    ]
    for route, code, until in q.cooling_routes:
        lines.append(f"Cooling {label(route)}: {code}; availableAfter={iso(until)}")
    for c in q.recent_attempts:
        lines.append(f"Attempt {label(c.model)}: {c.outcome}{f'/{c.code}' if c.code else ''}")
    legacy = f"Legacy import: {r.legacy_import}"
    if r.legacy_count is not None:
        legacy += f"; imported={r.legacy_count}"
    if r.legacy_import == "failed":
        legacy += "; learning blocked until an import succeeds"
    legacy += f"; obsolete legacy files: {', '.join(r.obsolete_files) or 'none'}"
    lines.append(legacy)
    lines.append(
        "Processing:" if r.recent_model_events else "Processing: no model transactions yet"
    )
    for e in r.recent_model_events:
        changed = len(e.after)
        note = " (no memory changes)" if changed == 0 else ""
        lines.append(f"{clip_bytes(redact(e.reason), 200)}: changedRecords={changed}{note}")
    lines.append(f"Budget: {q.budget.line}")
    return lines


def print_status(r: StatusReport, o: Output) -> None:
    for line in pi_lines(r):
        o.line(one_line(line))
    q = r.queue
    p = q.policy
    o.line(f"Policy from: {p.origin}" + (f" ({p.problem})" if p.problem else ""))
    o.line(f"Tokens (24 h): in={q.input_tokens_24h} out={q.output_tokens_24h}")
    for problem in r.problems:
        o.line(f"PROBLEM: {one_line(problem)}")
