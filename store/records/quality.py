"""Quality, freshness and dormancy (STORE.md §3, the 0.4.0 rules)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ..js import is_canonical_iso, iso, parse_ms

if TYPE_CHECKING:  # the model imports this module: the records hold no quality of their own
    from .model import Memory

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


class Quality(NamedTuple):
    """``memoryQuality(memory, now)`` (§3.2) plus what a display needs.

    A named tuple, not a dataclass: a sort or a review builds one per record, and
    a tuple is several times faster to build than a frozen slotted instance.
    What follows from its fields (the days left) is computed when asked.
    """

    basis: str
    method: str
    age_days: float
    freshness: float
    dormant: bool
    aging: bool
    confirmed_at: str
    evidence_weight: float
    utility: float
    accuracy: float
    factor: float
    horizon: float | None
    """Days after its confirmation when the record goes dormant (None: pinned, never)."""

    @property
    def days_until_aging(self) -> float | None:
        """Days until it turns aging, at half the horizon (0 once it has)."""
        h = self.horizon
        return None if h is None else max(0.0, h / 2 - self.age_days)

    @property
    def days_until_dormant(self) -> float | None:
        """Days until it goes dormant (0 once it has)."""
        h = self.horizon
        return None if h is None else max(0.0, h - self.age_days)

    def as_json(self) -> dict[str, Any]:
        """The §3.2 object with upstream's field names and order (numbers as JS prints them)."""
        return {
            "basis": self.basis,
            "method": self.method,
            "ageDays": js_number(self.age_days),
            "freshness": js_number(self.freshness),
            "dormant": self.dormant,
            "aging": self.aging,
            "confirmedAt": self.confirmed_at,
            "evidenceWeight": js_number(self.evidence_weight),
            "utility": js_number(self.utility),
            "accuracy": js_number(self.accuracy),
            "factor": js_number(self.factor),
        }


def js_number(value: float) -> float | int:
    """JavaScript prints an integral number without a fraction: ``1``, not ``1.0``."""
    return int(value) if float(value).is_integer() else value


def age_from(confirmed_ms: float, now_ms: float) -> float:
    """Days from a confirmation at ``confirmed_ms`` to ``now_ms`` (0 before it)."""
    return max(0.0, (now_ms - confirmed_ms) / DAY_MS)


def confirmed_ms(updated_at: str, reinforced_at: str | None) -> float:
    """When a record was last confirmed (updated or reinforced): its ``confirmedAt``."""
    return max(parse_ms(updated_at) or 0.0, parse_ms(reinforced_at) or 0.0)


def age_days(updated_at: str, reinforced_at: str | None, now_ms: float) -> float:
    """Days from a record's confirmation to ``now_ms``: the ``ageDays`` of its quality,
    without the rest of it."""
    return age_from(confirmed_ms(updated_at, reinforced_at), now_ms)


def dormancy(age: float, horizon: float | None) -> tuple[bool, bool]:
    """(aging, dormant) of a record ``age`` days after its confirmation whose horizon is
    ``horizon`` days (None: pinned, neither): aging past half of it, dormant past it."""
    if horizon is None:
        return False, False
    return age > horizon / 2, age > horizon


def evidence_weight(kind: str, basis: str | None) -> float:
    """The ``evidenceWeight`` of a record of ``kind`` whose evidence has ``basis``."""
    return _WEIGHTS[evidence_priority(kind, basis)]


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
    """``memoryQuality`` of a typed record at ``now_ms`` (its own moment, or the time dial's)."""
    m = memory
    evidence, utility, accuracy = m.evidence, m.utility, m.accuracy
    return compute_quality(
        m.kind,
        m.updated_at,
        m.reinforced_at,
        m.layer == "pinned",
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
    updated = parse_ms(updated_at) or 0.0
    reinforced = parse_ms(reinforced_at) or 0.0
    confirmed = max(updated, reinforced)
    anchor = reinforced_at if reinforced > updated else updated_at
    # The anchor string is reused when it is already in toISOString() shape (the usual case).
    confirmed_at = (
        anchor
        if isinstance(anchor, str) and confirmed and is_canonical_iso(anchor)
        else iso(confirmed)
    )
    age, freshness, aging, dormant, weight, utility, accuracy, factor = _standing(
        kind, confirmed, pinned, basis_raw, utility_verdict, accuracy_verdict, now_ms
    )
    dormant_days = POLICY[kind][2]
    return Quality(
        basis_raw or "unknown",
        method_raw or "unknown",
        age,
        freshness,
        dormant,
        aging,
        confirmed_at,
        weight,
        utility,
        accuracy,
        factor,
        None if pinned else dormant_days,
    )


def verdict_weights(
    utility_verdict: str | None, accuracy_verdict: str | None
) -> tuple[float, float]:
    """The utility and accuracy weights of a record's quality, from its verdicts."""
    utility = 1.05 if utility_verdict == "useful" else 0.9 if utility_verdict == "unhelpful" else 1
    accuracy = (
        1.05 if accuracy_verdict == "accurate" else 0.5 if accuracy_verdict == "incorrect" else 1
    )
    return utility, accuracy


def _standing(
    kind: str,
    confirmed: float,
    pinned: bool,
    basis: str | None,
    utility_verdict: str | None,
    accuracy_verdict: str | None,
    now_ms: float,
) -> tuple[float, float, bool, bool, float, float, float, float]:
    """(age, freshness, aging, dormant, weight, utility, accuracy, factor): the figures
    of ``memoryQuality``, one formula for the whole quality and for ``factor_dormant``."""
    half_life, floor, dormant_days = POLICY[kind]
    age = age_from(confirmed, now_ms)
    freshness = 1.0 if pinned else floor + (1 - floor) * 2 ** (-age / half_life)
    aging, dormant = dormancy(age, None if pinned else dormant_days)
    weight = evidence_weight(kind, basis)
    utility, accuracy = verdict_weights(utility_verdict, accuracy_verdict)
    return (
        age,
        freshness,
        aging,
        dormant,
        weight,
        utility,
        accuracy,
        freshness * weight * utility * accuracy,
    )


def factor_dormant(m: Memory, now_ms: float) -> tuple[float, bool]:
    """``memoryQuality(m, now_ms)``'s factor and dormancy alone (what the recall index
    keeps of every record), without building the rest."""
    evidence, utility, accuracy = m.evidence, m.utility, m.accuracy
    figures = _standing(
        m.kind,
        confirmed_ms(m.updated_at, m.reinforced_at),
        m.layer == "pinned",
        evidence.basis if evidence else None,
        utility.verdict if utility else None,
        accuracy.verdict if accuracy else None,
        now_ms,
    )
    return figures[7], figures[3]


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
