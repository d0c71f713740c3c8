"""The budget line (STORE.md §5.9): may pi's next learning call go now?

pi's ``/memory status`` prints ``budgetStatus(model)`` (§5.8) for its current model,
with an estimate for an empty input taken from the model's catalog pricing. That
estimate is made without call options there, so it is always unknown: while a daily
ceiling (``dailyEstimatedUsd``) is set, pi's status says the budget is blocked, for
any model. Outside pi the current model is not known either; the line is for the
model of the last recorded call ("unavailable" when there is none), as pi would
print it for that model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..base import StoreBase
from ..js import iso

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
    """Why it waits or is blocked, in a few words (empty when available)."""

    @property
    def line(self) -> str:
        """``available``, ``waiting until <ISO>`` or ``blocked``, with the reason."""
        if self.state == "waiting" and self.until is not None:
            head = f"waiting until {iso(self.until)}"
        else:
            head = self.state
        return f"{head} ({self.reason})" if self.reason else head

    @property
    def pi_line(self) -> str:
        """The line as pi's ``budgetStatus`` words it."""
        if self.state == "available":
            return "Shared model budget: available."
        if self.state == "waiting" and self.until is not None:
            return (
                f"Shared model budget: waiting until {iso(self.until)} (manual evolve does "
                "not bypass shared ceilings)."
            )
        return (
            f"Shared model budget: blocked. dailyEstimatedUsd is set but "
            f"{self.model or 'unavailable'} has no catalog pricing, so the ceiling cannot be "
            "enforced and no call is made. Remove dailyEstimatedUsd from recovery.json, or "
            "use a model with known pricing."
        )


async def budget_status(store: StoreBase, model: str | None = None) -> Budget:
    """pi's ``budgetStatus(model)`` as its status computes it (no catalog pricing);
    ``model`` defaults to the model of the newest call."""
    now = int(store.now_ms())
    policy = store.policy
    if model is None:
        newest = await store.query(
            "SELECT model FROM model_calls WHERE at <= ? ORDER BY at DESC, rowid DESC LIMIT 1",
            (now,),
        )
        model = str(newest[0][0]) if newest else None
    if policy.daily_estimated_usd is not None:
        why = (
            f"a daily ceiling of ${policy.daily_estimated_usd:g} is set and pi's status has "
            f"no catalog pricing for {model or 'any model'}"
        )
        return Budget("blocked", None, model, why)
    until = 0
    reasons: list[tuple[int, str]] = []
    hour = await store.query(
        "SELECT at FROM model_calls WHERE at > ? AND at <= ? ORDER BY at DESC LIMIT ?",
        (now - HOUR_MS, now, policy.calls_per_hour),
    )
    if len(hour) >= policy.calls_per_hour:
        u1 = int(hour[policy.calls_per_hour - 1][0]) + HOUR_MS
        reasons.append((u1, f"{policy.calls_per_hour} calls in the last hour, the limit"))
        until = max(until, u1)
    if model is not None:
        marks = ",".join("?" * len(TRANSIENT_CODES))
        failed = await store.query(
            "SELECT finished_at FROM model_calls WHERE model=? AND outcome='failed' "
            f"AND code IN ({marks}) AND finished_at > ? AND finished_at <= ? "
            "ORDER BY finished_at DESC LIMIT ?",
            (model, *TRANSIENT_CODES, now - FAILURE_WINDOW_MS, now, MAX_WINDOW_FAILURES),
        )
        if len(failed) >= MAX_WINDOW_FAILURES:
            u2 = int(failed[MAX_WINDOW_FAILURES - 1][0]) + FAILURE_WINDOW_MS
            reasons.append((u2, f"{MAX_WINDOW_FAILURES} failures of {model} in 15 minutes"))
            until = max(until, u2)
    if until > now:
        why = "; ".join(text for at, text in reasons if at > now)
        return Budget("waiting", until, model, why)
    return Budget("available", None, model, "")
