"""A realistic demo store, written entirely through this package's own writes.

Two projects, about two years of history with most of it in the last month:
captures, learning runs that add, replace and reaffirm memories, curation of
every kind (pin, feedback, forget, correct, conflict, resolve, undo) and a
learning queue with sources in every state. Everything is placed relative to
``now_ms``, and ids come from a counter, so the same ``now`` gives the same store.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..create import create_store
from ..js import fp, iso, js_json
from ..learning.learning import ClaimIn, Learning, Run
from ..store import MemoryStore
from .sessions import _HISTORY, _MONTH, LAB, SHOP, _Summary, _summary

DAY = 86_400_000
HOUR = 3_600_000
MINUTE = 60_000
SONNET = "anthropic/claude-sonnet-4-5"
MINI = "openai/gpt-5-mini"
LOCAL = "ollama/qwen2.5-coder:14b"


class _Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


class _Ids:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return str(uuid.UUID(int=(0x5EED << 96) | self.n, version=4))


async def _build(path: Path, now_ms: float) -> None:
    clock = _Clock(now_ms - 800 * DAY)
    ids = _Ids()
    store = await MemoryStore.open(path, clock=clock, new_id=ids)
    learning = Learning(store)
    counter = 0

    def at(days_ago: float) -> float:
        return now_ms - days_ago * DAY

    def rid(scope: str, kind: str, content: str) -> str:
        return fp(js_json([scope, kind, content]))

    async def capture(kind: str, scope: str, created: float, content: str, **extra: Any) -> str:
        nonlocal counter
        counter += 1
        session = str(uuid.UUID(int=(0xD3E0 << 96) | counter, version=4))
        if kind == "summary":
            sid = f"compact:{session}:{fp(content)[:8]}"
        elif kind == "user":
            sid = f"user:{session}:{int(created)}:{fp(content)}"
        else:
            sid = f"progress:{session}:{int(created)}:{fp(content)}"
        clock.t = created + MINUTE
        source = {"id": sid, "scope": scope, "kind": kind, "content": content}
        source["createdAt"] = iso(created)
        source.update(extra)
        await learning.capture(source)
        return sid

    async def learn(
        sid: str,
        claims: list[ClaimIn],
        model: str = SONNET,
        *,
        cost: float = 0.0123,
        tokens: tuple[int, int] = (2400, 90),
    ) -> Run | None:
        clock.t += MINUTE
        run = await learning.begin(sid, model=model, reserved_usd=cost * 18)
        if run is None:
            return None
        shown = {c["id"] for c in run.candidates}
        usable = [c for c in claims if c.replaces is None or c.replaces in shown]
        clock.t += 9 * 1000
        await learning.finish(
            run,
            usable,
            model=model,
            diagnostic={
                "protocol": 2,
                "model": model,
                "outputBytes": 120 + 90 * len(usable),
                "textBlocks": 1,
                "finalBlocks": 1,
                "inputTokens": tokens[0],
                "outputTokens": tokens[1],
                "reportedUsd": cost,
            },
            charged_usd=cost,
            input_tokens=tokens[0],
            output_tokens=tokens[1],
        )
        return run

    async def fail(sid: str, code: str, model: str = SONNET, after_ms: float = 4000) -> None:
        clock.t += MINUTE
        run = await learning.begin(sid, model=model, mode="manual", reserved_usd=0.21)
        if run is not None:
            clock.t += after_ms
            await learning.fail(
                run, code, diagnostic={"protocol": 2, "model": model, "reason": "http_error"}
            )

    async def manual(days_ago: float) -> None:
        clock.t = at(days_ago)

    # Every step is (days ago, action); they run oldest first, so event order
    # (rowid) agrees with time, as it does in a store pi wrote.
    steps: list[tuple[float, Callable[[], Awaitable[object]]]] = []
    undo_target: dict[str, str | None] = {}

    def session(s: _Summary, claims: list[ClaimIn], model: str = SONNET) -> None:
        async def run() -> None:
            sid = await capture("summary", s.scope, at(s.days_ago), s.text)
            await learn(sid, claims, model)

        steps.append((s.days_ago, run))

    def statement(days: float, scope: str, text: str, claims: list[ClaimIn], **extra: Any) -> None:
        kind = "progress" if "targets" in extra else "user"

        async def run() -> None:
            sid = await capture(kind, scope, at(days), text, **extra)
            await learn(sid, claims, cost=0.0081 if kind == "progress" else 0.0123)

        steps.append((days, run))

    def curate(days: float, action: Callable[[], Awaitable[object]]) -> None:
        async def run() -> None:
            await manual(days)
            await action()

        steps.append((days, run))

    # history: captures learned by a model, nothing else happening to them
    for s in _HISTORY:
        session(s, [])
    statement(
        500,
        SHOP,
        "Please always use British spelling in user-facing copy.",
        [
            ClaimIn(
                "preference",
                "Use British spelling in user-facing copy.",
                search_terms=("spelling", "copy"),
            )
        ],
    )
    # the month: learning with a replacement, an alias annotation and reaffirmations
    for s in _MONTH:
        claims: list[ClaimIn] = []
        if s.days_ago == 27:
            claims.append(
                ClaimIn(
                    "fact",
                    "The dev database listens on port 5432 since the compose file was cleaned up.",
                    replaces=rid(
                        SHOP, "fact", "The dev database listens on port 5433 in docker compose."
                    ),
                )
            )
        if s.days_ago == 14:
            claims.append(
                ClaimIn(
                    "decision",
                    "Tide charts are drawn client-side with uPlot.",
                    search_terms=("charts", "uPlot", "graphs"),
                )
            )
        session(s, claims, MINI if s.days_ago == 6 else SONNET)
    # a user statement that outranks a summary-derived decision
    statement(
        4,
        LAB,
        "Alerts no longer go to a ntfy topic: Alertmanager now pages through Pushover.",
        [
            ClaimIn(
                "decision",
                "Alerts page through Pushover via Alertmanager (ntfy was retired).",
                replaces=rid(LAB, "decision", "Alerts go to a ntfy topic, not e-mail."),
            )
        ],
    )
    # a progress observation updating a project state
    target = rid(SHOP, "project_state", "[pending] Cut release 2.4 after the chart review")
    statement(
        1.2,
        SHOP,
        js_json({"request": "cut the release", "completion": "completed", "observations": []}),
        [
            ClaimIn(
                "project_state", "[done] Release 2.4 tagged v2.4.0 and deployed", replaces=target
            )
        ],
        targets=[target],
    )

    # curation by the user
    uv = "Use uv for Python environments; never pip install into the system interpreter."
    caddy = "Caddy terminates TLS for every service on the LAN."
    celery = "Celery uses Redis as its broker; results go to Postgres."

    async def unhelpful_verdict() -> None:
        undo_target["event"] = await store.feedback(
            rid(SHOP, "fact", "Forecast pages are cached in Redis for 15 minutes."), "unhelpful"
        )

    async def undo_verdict() -> None:
        event = undo_target.get("event")
        if event is not None:
            await store.undo(event)

    curate(20, lambda: store.pin(rid(SHOP, "preference", uv)))
    curate(19.9, lambda: store.pin(rid(LAB, "decision", caddy)))
    curate(18, lambda: store.feedback(
        rid(SHOP, "fact", "The tide model lives in tidewater/model and is pure NumPy."), "useful"
    ))  # fmt: skip
    curate(16, lambda: store.feedback(
        rid(LAB, "fact", "The Proxmox host is pve1 at 192.168.10.2."), "accurate"
    ))  # fmt: skip
    curate(15, unhelpful_verdict)
    curate(13, lambda: store.feedback(
        rid(SHOP, "preference", "Format Python with ruff format and keep lines at 100 columns."),
        "unhelpful",
    ))  # fmt: skip
    curate(10, lambda: store.feedback(
        rid(LAB, "fact", "Grafana runs at grafana.lab.internal behind Caddy."), "incorrect"
    ))  # fmt: skip
    curate(9, lambda: store.correct(
        rid(LAB, "fact", "The NAS exports /volume1/backup over NFS to the 10.0.0.0/24 subnet."),
        "The NAS exports /volume1/backup over NFS to 192.168.10.0/24 only.",
    ))  # fmt: skip
    curate(8, lambda: store.forget(rid(
        SHOP, "project_state",
        "[Blocked] Waiting for the NOAA API key increase before backfilling 2019",
    )))  # fmt: skip
    curate(7, lambda: store.conflict(
        rid(SHOP, "decision", celery),
        rid(SHOP, "fact", "Celery workers run with concurrency 4 in production."),
    ))  # fmt: skip
    curate(5, lambda: store.resolve(rid(SHOP, "decision", celery)))
    curate(3, undo_verdict)
    curate(1.5, lambda: store.feedback(
        rid(SHOP, "preference", "Type-check with mypy --strict before every commit."), "useful"
    ))  # fmt: skip

    # the learning queue as it stands now: failures, pauses, waiting and running jobs
    def failing(days: float, kind: str, scope: str, text: str, *codes: tuple[str, str]) -> None:
        async def run() -> None:
            sid = await capture(kind, scope, at(days), text)
            for i, (code, model) in enumerate(codes):
                if i:
                    clock.t += 70 * MINUTE
                await fail(sid, code, model)

        steps.append((days, run))

    def waiting(days: float, kind: str, scope: str, text: str, *, start: bool = False) -> None:
        async def run() -> None:
            sid = await capture(kind, scope, at(days), text)
            if start:
                clock.t = now_ms - 20_000
                await learning.begin(sid, model=SONNET, reserved_usd=0.2)

        steps.append((days, run))

    failing(
        0.9, "user", LAB, "The Pi-hole moved to 192.168.10.53; update DNS docs.",
        ("provider", SONNET), ("provider", SONNET),
    )  # fmt: skip
    failing(
        0.7, "summary", SHOP,
        _summary("Chart review.", decisions=["Chart colours follow the Okabe-Ito palette."]),
        ("rate_limit", MINI),
    )  # fmt: skip
    failing(0.5, "user", SHOP, "Never commit the .env.production file.", ("safety", LOCAL))
    failing(
        0.4, "summary", LAB,
        _summary(
            "Disk alerts.",
            context=["node_exporter textfile metrics live in /var/lib/node_exporter."],
        ),
        ("invalid_output", MINI),
    )  # fmt: skip
    failing(
        0.3, "summary", SHOP,
        _summary(
            "Timezone bug.",
            context=["Forecasts are computed in UTC and shown in station local time."],
        ),
        ("write_rejected", SONNET),
    )  # fmt: skip
    waiting(0.05, "user", SHOP, "Use httpx instead of requests for new HTTP clients.")
    waiting(
        0.02, "summary", LAB,
        _summary(
            "Certificates.",
            context=["Caddy gets certificates from the internal step-ca at ca.lab.internal."],
        ),
    )  # fmt: skip
    waiting(
        0.01, "summary", SHOP,
        _summary(
            "Rounding.", context=["Tide heights are rounded to 2 decimals at the API boundary."]
        ),
        start=True,
    )  # fmt: skip

    for _, step in sorted(steps, key=lambda st: -st[0]):
        await step()
    await store.close()


DEMO_POLICY = '{"callsPerHour": 1000}\n'
"""The demo's ``recovery.json``: pi's highest hourly call limit, so the live demo
learner (which keeps to it) can run every few seconds."""


def build_demo(path: str | Path, *, now_ms: float) -> Path:
    """Create the demo store at ``path`` (which must not exist), with its policy
    beside it, and return it."""
    p = create_store(path)
    asyncio.run(_build(p, now_ms))
    _write_policy(p)
    return p


async def build_demo_async(path: str | Path, *, now_ms: float) -> Path:
    """``build_demo`` for callers already inside an event loop."""
    p = create_store(path)
    await _build(p, now_ms)
    _write_policy(p)
    return p


def _write_policy(store_path: Path) -> None:
    policy = store_path.parent / "recovery.json"
    with contextlib.suppress(FileExistsError), open(policy, "x", encoding="utf-8") as handle:
        handle.write(DEMO_POLICY)  # one already there (a second demo beside it) is kept
