"""The budget line (STORE.md §5.9): may pi's next learning call go now?

pi computes ``budgetUntil(model, now)`` (§5.8) for the model it would call, with an
estimate for an empty input. The estimate comes from the model's catalog pricing,
which lives in pi and not in the store; the store only keeps what was estimated for
each past call (``reserved_usd``, NULL when pricing was unknown). So where the daily
ceiling needs the next call's price, this module reads it from the model's last
call, and says so: the figures are pi's, the price is the last one pi recorded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from ._js import iso
from .base import StoreBase

HOUR_MS = 3_600_000
DAY_MS = 86_400_000
FAILURE_WINDOW_MS = 900_000
MAX_WINDOW_FAILURES = 5
TRANSIENT_CODES = ("provider", "timeout", "interrupted")

BudgetState = Literal["available", "waiting", "blocked"]


@dataclass(frozen=True, slots=True)
class Budget:
    """The shared wait for ``model`` and why."""

    state: BudgetState
    until: int | None
    """When a waiting call may go (epoch ms); None when available or blocked."""
    model: str | None
    """The model the line is for: the one named, or the model of the newest call."""
    reason: str
    """Why it waits or is blocked; for ``available``, what was assumed (may be empty)."""

    @property
    def line(self) -> str:
        """``available``, ``waiting until <ISO>`` or ``blocked``, with the reason."""
        if self.state == "waiting" and self.until is not None:
            head = f"waiting until {iso(self.until)}"
        else:
            head = self.state
        return f"{head} ({self.reason})" if self.reason else head


async def budget_status(store: StoreBase, model: str | None = None) -> Budget:
    """pi's ``budgetStatus(model)``; ``model`` defaults to the model of the newest call."""
    now = int(store.now_ms())
    policy = store.policy
    if model is None:
        newest = await store.query(
            "SELECT model FROM model_calls ORDER BY at DESC, rowid DESC LIMIT 1"
        )
        model = str(newest[0][0]) if newest else None
    until = 0
    reasons: list[tuple[int, str]] = []
    hour = await store.query(
        "SELECT at FROM model_calls WHERE at > ? ORDER BY at DESC LIMIT ?",
        (now - HOUR_MS, policy.calls_per_hour),
    )
    if len(hour) >= policy.calls_per_hour:
        u1 = int(hour[policy.calls_per_hour - 1][0]) + HOUR_MS
        reasons.append((u1, f"{policy.calls_per_hour} calls in the last hour, the limit"))
        until = max(until, u1)
    if model is not None:
        marks = ",".join("?" * len(TRANSIENT_CODES))
        failed = await store.query(
            "SELECT finished_at FROM model_calls WHERE model=? AND outcome='failed' "
            f"AND code IN ({marks}) AND finished_at > ? ORDER BY finished_at DESC LIMIT ?",
            (model, *TRANSIENT_CODES, now - FAILURE_WINDOW_MS, MAX_WINDOW_FAILURES),
        )
        if len(failed) >= MAX_WINDOW_FAILURES:
            u2 = int(failed[MAX_WINDOW_FAILURES - 1][0]) + FAILURE_WINDOW_MS
            reasons.append((u2, f"{MAX_WINDOW_FAILURES} failures of {model} in 15 minutes"))
            until = max(until, u2)
    assumed = ""
    ceiling = policy.daily_estimated_usd
    if ceiling is not None and model is None:  # no call recorded: nothing to price one by
        assumed = f"daily ceiling ${ceiling:g}; no call recorded yet to price the next by"
    elif ceiling is not None and model is not None:
        estimate = await _last_estimate(store, model)
        if estimate is None or not math.isfinite(estimate):
            why = f"a daily ceiling of ${ceiling:g} is set and pi has no price for {model}"
            return Budget("blocked", None, model, why)
        if estimate > ceiling:
            why = f"one call (${estimate:.4f}) alone exceeds the daily ceiling of ${ceiling:g}"
            return Budget("blocked", None, model, why)
        day = await store.query(
            "SELECT at, charged_usd, reserved_usd FROM model_calls WHERE at > ? ORDER BY at",
            (now - DAY_MS,),
        )
        spend = sum(float(c if c is not None else r if r is not None else 0) for _, c, r in day)
        unknown = any(c is None and r is None for _, c, r in day)
        if day and (unknown or spend + estimate > ceiling):
            u3 = int(day[0][0]) + DAY_MS
            why = (
                "a call in the last 24 h has no known cost"
                if unknown
                else f"${spend:.4f} spent in 24 h; the next call would pass ${ceiling:g}"
            )
            reasons.append((u3, why))
            until = max(until, u3)
        assumed = f"the next call priced as {model}'s last, ${estimate:.4f}"
    if until > now:
        why = "; ".join(text for at, text in reasons if at > now)
        return Budget("waiting", until, model, why)
    return Budget("available", None, model, assumed)


async def _last_estimate(store: StoreBase, model: str) -> float | None:
    """What pi estimated for ``model``'s newest call; None when that was unknown."""
    rows = await store.query(
        "SELECT reserved_usd FROM model_calls WHERE model=? ORDER BY at DESC, rowid DESC LIMIT 1",
        (model,),
    )
    if not rows or rows[0][0] is None:
        return None
    return float(rows[0][0])
