"""A learning run's failure as pi records it (§5.7, §5.8): the attempt's backoff, the
source paused after too many, the route cooled down, and the runs whose lease ran out."""

from __future__ import annotations

import random
from typing import Any

import aiosqlite

from ..errors import Refused
from ..js import js_json
from ..records.model import FAILURE_CODES, Source
from ..records.rows import is_paused
from ..store import MemoryStore
from .run import Run

DELAYS_MS = (60_000, 300_000, 900_000, 3_600_000)
NOW_RETRY = frozenset(("auth", "quota", "rate_limit", "context_limit", "request"))
PAUSE_NOW = frozenset(("write_rejected", "unavailable", "safety"))
OUTPUT_CODES = frozenset(("invalid_output", "output_limit"))
TRANSPORT_CODES = frozenset(("provider", "timeout", "interrupted"))


def retry_at(failures: int, now: int) -> int:
    """The backoff formula of §2.8.5 (without jitter)."""
    if failures >= 5:
        return 0
    return now + DELAYS_MS[max(0, failures - 1)]


class Failing:
    """The failure half of ``Learning`` (its ``store`` is the one it writes)."""

    store: MemoryStore

    async def fail(
        self,
        run: Run,
        code: str = "unknown",
        *,
        diagnostic: dict[str, Any] | None = None,
        jitter: random.Random | None = None,
    ) -> None:
        """§5.7: record a failed attempt, its backoff and any route cool-down."""
        if code not in FAILURE_CODES:
            raise Refused("Invalid failure code")
        sid = run.source["id"]
        async with self.store.transaction() as db:
            now = int(self.store.now_ms())
            row = await (
                await db.execute(
                    "SELECT failures, output_failures, last_error, calls, call_ms, diagnostic "
                    "FROM sources WHERE id=? AND attempt=? AND state='running'",
                    (sid, run.attempt),
                )
            ).fetchone()
            outcome = "cancelled" if row is None or code == "cancelled" else "failed"
            await self.store.finish_call(db, sid, run.attempt, outcome, code)
            if outcome == "failed" and run.model is not None:
                await self._cool_down(db, run.model, code, now)
            if row is None:
                return
            failures, output_failures, last_error, calls, call_ms, old_diag = row
            if code == "cancelled":
                limits = self.store.policy.source_calls, self.store.policy.source_time_ms
                paused = is_paused(
                    "pending", failures, output_failures, last_error, calls, call_ms, *limits
                )
                await db.execute(
                    "UPDATE sources SET state=?, lease=0, retry_at=? WHERE id=?",
                    ("failed" if paused else "pending", now, sid),
                )
                return
            failures += 1
            if code in OUTPUT_CODES:
                output_failures += 1
            paused_now = failures >= 5 or output_failures >= 3 or code in PAUSE_NOW
            if paused_now:
                due = 0
            elif code in NOW_RETRY:
                due = now
            else:
                due = retry_at(failures, now)
                if jitter is not None and due > now:
                    due += int((due - now) * jitter.random() * 0.2)
            await db.execute(
                "UPDATE sources SET state='failed', lease=0, failures=?, output_failures=?, "
                "retry_at=?, failed_at=?, last_error=?, diagnostic=? WHERE id=?",
                (
                    failures,
                    output_failures,
                    due,
                    now,
                    code,
                    js_json(diagnostic) if diagnostic else old_diag,
                    sid,
                ),
            )

    async def _cool_down(self, db: aiosqlite.Connection, model: str, code: str, now: int) -> None:
        """Route cool-downs of §5.8."""
        provider = model.split("/", 1)[0]
        route: str | None = None
        delay = 0
        if code == "auth":
            route, delay = f"provider:{provider}", 900_000
        elif code == "quota":
            route, delay = f"provider:{provider}", 3_600_000
        elif code == "rate_limit":
            route, delay = f"model:{model}", 60_000
        elif code in ("request", "context_limit"):
            route, delay = f"model:{model}", 3_600_000
        elif code in TRANSPORT_CODES or code in OUTPUT_CODES:
            group = TRANSPORT_CODES if code in TRANSPORT_CODES else OUTPUT_CODES
            marks = ",".join("?" * len(group))
            row = await (
                await db.execute(
                    f"SELECT count(*) FROM model_calls WHERE model=? AND outcome='failed' "
                    f"AND finished_at > ? AND code IN ({marks})",
                    (model, now - 900_000, *sorted(group)),
                )
            ).fetchone()
            if row is not None and row[0] >= 2:
                route, delay = f"model:{model}", 900_000
        if route is not None:
            await db.execute(
                "INSERT INTO route_health VALUES (?,?,?) ON CONFLICT(id) DO UPDATE SET "
                "until=max(until, excluded.until), code=excluded.code",
                (route, now + delay, code),
            )

    async def recover_expired(self) -> int:
        """§5.7: fail every running source whose lease has expired as ``interrupted``."""
        now = int(self.store.now_ms())
        rows = await self.store.sources()
        expired = [
            s for s in rows if isinstance(s, Source) and s.state == "running" and s.lease <= now
        ]
        for s in expired:
            model = s.call_models[-1] if s.call_models else None
            await self.fail(Run(s.data, s.attempt, 0, model), "interrupted")
        return len(expired)
