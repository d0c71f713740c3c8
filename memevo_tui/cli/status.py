"""``status``: pi's ``/memory status`` report, line for line where STORE.md §5.9 gives
it (labels and order), then what memevo-tui adds."""

from __future__ import annotations

from typing import Any

from store import (
    FAILURE_CODES,
    Source,
    StatusReport,
    clip_bytes,
    iso,
    js_json,
    js_number_text,
    label,
)
from store import redact_text as redact

from ..core.text import one_line
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
        "modelCallsPrunedBefore": iso(q.pruned_before) if q.pruned_before is not None else None,
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
        head += "paused; inspect diagnostics, /memory evolve <source-id> for one extra attempt"
    else:
        head += f"nextRetry={iso(s.retry_at) if s.retry_at else 'due now'}"
    return [head, f"  diagnostics={js_json(s.diagnostic)}"]


AS_NOW = " (as now)"
"""After a figure of ``status --as-of`` that only the present holds (the learning queue,
route health): the rest is taken as of the moment."""


def pi_lines(r: StatusReport, *, as_now: str = "") -> list[str]:
    """What pi's ``/memory status`` prints from the store, word for word and in its
    order (its store's ``status()``), then its budget line for the model of the last
    recorded call. ``as_now`` (``AS_NOW``, as of a past moment) follows each figure that
    is as it is now."""
    q = r.queue
    p = q.policy
    states = ", ".join(f"{k}={v}" for k, v in q.sources_by_state.items()) or "no sources"
    check = "SQLite ok" if not r.problems else f"SQLite: {len(r.problems)} problem(s)"
    lines = [
        f"{r.memory_rows} memories; {states}{as_now}; {check} (schema {r.schema})",
        f"State directory: {redact(r.state_dir)}",
        f"Automatic recovery: retrying={q.retrying}, paused={q.paused} (failure limit 5; "
        "output limit 3; non-retryable errors pause immediately)" + as_now,
    ]
    if q.backoff_waiting:
        nxt = iso(q.next_eligible) if q.next_eligible else "unknown"
        lines.append(f"Source-backoff waiting={q.backoff_waiting}; nextEligible={nxt}{as_now}")
    for s in q.failing:
        head, diagnostics = _source_row(s, p.source_calls, p.source_time_ms)
        lines += [head + as_now, diagnostics]
    if q.failed_or_paused > 5:
        lines.append(f"{q.failed_or_paused - 5} more failed sources.")
    ceiling = (
        js_number_text(p.daily_estimated_usd) if p.daily_estimated_usd is not None else "disabled"
    )
    fallback = "true" if p.cross_provider_fallback else "false"
    lines += [
        f"Routing: default follows Pi; cross-provider fallback={fallback}; "
        f"models/source<={p.source_models}; calls/source<={p.source_calls}; "
        f"time/source<={p.source_time_ms}ms",
        f"Shared calls/hour={q.calls_last_hour}/{p.calls_per_hour}; last24h={q.calls_last_24h}; "
        f"catalog-estimated/reported USD={q.usd_last_24h:.4f}; "
        f"unknown-cost calls={q.unknown_cost_calls}; estimated daily ceiling={ceiling}",
    ]
    for route, code, until in q.cooling_routes:
        lines.append(f"{label(route)}: {code}; availableAfter={iso(until)}{as_now}")
    for c in q.recent_attempts:
        lines.append(f"Attempt {label(c.model)}: {c.outcome}{f'/{c.code}' if c.code else ''}")
    imported = f"; imported={r.legacy_count}" if r.legacy_count is not None else ""
    blocked = "Learning blocked until repaired; " if r.legacy_import == "failed" else ""
    lines += [
        f"Legacy import: {r.legacy_import}{imported}. {blocked}/memory import [directory] "
        "imports one ledger set, never replays a completed import.",
        f"Legacy inactive files: {', '.join(r.obsolete_files) or 'none'}; never "
        "executed/imported. /memory archive-legacy creates a copy-only backup.",
        "Processing outcomes: done means processed/retired, not necessarily learned.",
    ]
    for e in r.recent_model_events:
        changed = len(e.after)
        note = "" if changed else " (no memory changes)"
        lines.append(f"{clip_bytes(redact(e.reason), 200)}: changedRecords={changed}{note}")
    if not r.recent_model_events:
        lines.append("No model transactions yet.")
    lines.append("Use /memory learning for the last capture/nomination decision.")
    lines.append(q.budget.pi_line)
    return lines


OWN = "memevo-tui:"
"""How this project's own lines are marked, after pi's."""


def print_status(r: StatusReport, o: Output, *, as_of: bool = False) -> None:
    """``as_of``: the store as of a past moment; what only the present holds says so."""
    for line in pi_lines(r, as_now=AS_NOW if as_of else ""):
        o.line(one_line(line))
    q = r.queue
    p = q.policy
    model = q.budget.model or "unavailable"
    o.line(
        f"{OWN} pi also prints its current model and routes, which only pi knows; the "
        f"budget line above is for {one_line(model)}, the model of the last recorded call"
    )
    o.line(f"{OWN} policy from {p.origin}" + (f" ({p.problem})" if p.problem else ""))
    o.line(f"{OWN} tokens (24 h) in={q.input_tokens_24h} out={q.output_tokens_24h}")
    if q.pruned_before is not None:
        o.line(f"{OWN} pi keeps model calls 24 h and has pruned those before "
               f"{iso(q.pruned_before)}: the call counts, spend, tokens and attempts above "
               "are a lower bound")  # fmt: skip
    for problem in r.problems:
        o.line(f"{OWN} PROBLEM: {one_line(problem)}")
