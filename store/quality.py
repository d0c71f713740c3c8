"""Quality, freshness and dormancy (STORE.md §3, the 0.4.0 rules)."""

from __future__ import annotations

from typing import Any

from ._js import is_canonical_iso, iso, parse_ms
from .model import Evidence, Memory, Quality, Signal

DAY_MS = 86_400_000

# kind -> (half-life days, floor, dormant after days)
POLICY: dict[str, tuple[float, float, float]] = {
    "project_state": (3.0, 0.50, 7.0),
    "fact": (60.0, 0.50, 180.0),
    "decision": (120.0, 0.60, 365.0),
    "preference": (240.0, 0.70, 730.0),
}

_PRIORITY: dict[str, dict[str, int]] = {
    "manual_correction": {"preference": 4, "decision": 4, "fact": 4, "project_state": 4},
    "user_statement": {"preference": 3, "decision": 3, "fact": 2, "project_state": 2},
    "tool_observation": {"preference": 1, "decision": 1, "fact": 1, "project_state": 3},
    "summary": {"preference": 1, "decision": 1, "fact": 1, "project_state": 1},
}


_WEIGHTS = tuple(1 + 0.04 * priority for priority in range(5))
"""The evidence weight by priority (one float object each, shared by every record)."""


def evidence_priority(kind: str, basis: str | None) -> int:
    if basis is None:
        return 0
    return _PRIORITY.get(basis, {}).get(kind, 0)


def _verdict(data: dict[str, Any], slot: str) -> str | None:
    feedback = data.get("feedback")
    if isinstance(feedback, dict):
        signal = feedback.get(slot)
        if isinstance(signal, dict):
            verdict = signal.get("verdict")
            return verdict if isinstance(verdict, str) else None
    return None


def quality(data: dict[str, Any], now_ms: float) -> Quality:
    """``memoryQuality(record, now)`` for a validated record dict."""
    evidence = data.get("evidence")
    if not isinstance(evidence, dict):
        evidence = {}
    return compute_quality(
        data["kind"],
        data.get("updatedAt"),
        data.get("reinforcedAt"),
        data.get("layer") == "pinned",
        evidence.get("basis"),
        evidence.get("method"),
        _verdict(data, "utility"),
        _verdict(data, "accuracy"),
        now_ms,
    )


def quality_of(memory: Memory, now_ms: float) -> Quality:
    """``memoryQuality`` of a typed record at another moment (the time dial)."""
    m = memory
    return typed_quality(
        m.kind, m.updated_at, m.reinforced_at, m.layer, m.evidence, m.utility, m.accuracy, now_ms
    )


def typed_quality(
    kind: str,
    updated_at: str,
    reinforced_at: str | None,
    layer: str,
    evidence: Evidence | None,
    utility: Signal | None,
    accuracy: Signal | None,
    now_ms: float,
) -> Quality:
    """``memoryQuality`` from a record's typed fields (before or after it is built)."""
    return compute_quality(
        kind,
        updated_at,
        reinforced_at,
        layer == "pinned",
        evidence.basis if evidence else None,
        evidence.method if evidence else None,
        utility.verdict if utility else None,
        accuracy.verdict if accuracy else None,
        now_ms,
    )


def compute_quality(
    kind: str,
    updated_at: Any,
    reinforced_at: Any,
    pinned: bool,
    basis_raw: str | None,
    method_raw: str | None,
    utility_verdict: str | None,
    accuracy_verdict: str | None,
    now_ms: float,
) -> Quality:
    """``memoryQuality`` from the parts of a record it reads."""
    half_life, floor, dormant_days = POLICY[kind]
    updated = parse_ms(updated_at) or 0.0
    reinforced = parse_ms(reinforced_at) or 0.0
    confirmed_ms = max(updated, reinforced)
    anchor = reinforced_at if reinforced > updated else updated_at
    # The anchor string is reused when it is already in toISOString() shape (the usual case).
    confirmed_at = (
        anchor
        if isinstance(anchor, str) and confirmed_ms and is_canonical_iso(anchor)
        else iso(confirmed_ms)
    )
    age_days = max(0.0, (now_ms - confirmed_ms) / DAY_MS)
    if pinned:
        freshness = 1.0
    else:
        freshness = floor + (1 - floor) * 2 ** (-age_days / half_life)
    dormant = (not pinned) and age_days > dormant_days
    aging = (not pinned) and age_days > dormant_days / 2
    evidence_weight = _WEIGHTS[evidence_priority(kind, basis_raw)]
    utility = 1.05 if utility_verdict == "useful" else 0.9 if utility_verdict == "unhelpful" else 1
    accuracy = (
        1.05 if accuracy_verdict == "accurate" else 0.5 if accuracy_verdict == "incorrect" else 1
    )
    factor = freshness * evidence_weight * utility * accuracy
    return Quality(
        basis_raw or "unknown",
        method_raw or "unknown",
        age_days,
        freshness,
        dormant,
        aging,
        confirmed_at,
        evidence_weight,
        utility,
        accuracy,
        factor,
        None if pinned else dormant_days,
    )


def may_replace(old: dict[str, Any], incoming_basis: str) -> bool:
    """Replacement authority (§3.4)."""
    evidence = old.get("evidence")
    old_basis = evidence.get("basis") if isinstance(evidence, dict) else None
    old_priority = evidence_priority(old["kind"], old_basis)
    protected = (
        max(4, old_priority)
        if old.get("status") == "confirmed" or _verdict(old, "accuracy") == "accurate"
        else old_priority
    )
    if incoming_basis == "user_statement":
        return True
    if old["kind"] == "project_state" and incoming_basis == "tool_observation":
        return True
    return evidence_priority(old["kind"], incoming_basis) >= protected
