"""A learner that writes the way pi's learning runs do, a few times a second.

Used by ``memevo-tui --demo --live`` so a new user can watch sources arrive,
run, fail and finish, and memories appear, change and get reinforced. It uses
its own connection (as pi does), so the dashboard sees its commits the way it
sees pi's. Everything goes through ``store.learning``: the file stays valid.

It keeps to the policy it runs under, as pi does: no call while pi's budget line
says waiting or blocked, and calls spread evenly over the hour at the policy's
``callsPerHour`` (the demo store's ``recovery.json`` allows 1,000: one run every
3.6 s), by the store's clock.
"""

from __future__ import annotations

import asyncio
import random
import re
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..clock import Clock
from ..js import iso
from ..learning.budget import HOUR_MS, budget_status
from ..learning.learning import ClaimIn, Learning
from ..store import MemoryStore

SCOPES = ("/home/demo/projects/tidewater", "/home/demo/projects/homelab")
MODELS = ("anthropic/claude-sonnet-4-5", "openai/gpt-5-mini")
TOPICS = (
    ("fact", "The {svc} service listens on port {port} in staging."),
    ("fact", "{svc} logs are kept for {n} days in Loki."),
    ("decision", "{svc} deploys go through Argo CD with a manual sync window."),
    ("preference", "Keep {svc} configuration in environment variables, not files."),
    ("project_state", "[In Progress] Migrating {svc} to the new cluster"),
    ("project_state", "[done] {svc} health checks added to the load balancer"),
)
SERVICES = ("forecast-api", "tide-worker", "station-sync", "grafana", "pihole", "restic", "caddy")
SECTIONS = {
    "fact": "Critical Context",
    "decision": "Key Decisions",
    "preference": "Constraints & Preferences",
    "project_state": "Progress",
}
FAILURES = ("provider", "rate_limit", "timeout", "invalid_output")
Sleep = Callable[[float], Awaitable[None]]
"""Wait this many seconds of the learner's clock."""
_NUMBER = re.compile(r"\b\d{1,4}\b")


def _summary(claims: list[tuple[str, str]]) -> str:
    parts = ["## Goal\nKeep the demo projects running.\n"]
    for kind, text in claims:
        body = text.split("] ", 1)[1] if kind == "project_state" else text
        bullet = ("- [x] " if text.startswith("[done]") else "- ") + body
        parts.append(f"## {SECTIONS[kind]}\n{bullet}\n")
    return "\n".join(parts)


def _next_source(
    rng: random.Random, recent: dict[str, list[tuple[str, str]]], runs: int, at: str
) -> dict[str, Any]:
    """The next compaction summary the demo's pi writes (its scope's recent topics)."""
    scope = rng.choice(SCOPES)
    svc = rng.choice(SERVICES)
    kind, template = rng.choice(TOPICS)
    text = template.format(svc=svc, port=rng.randint(3000, 9999), n=rng.choice((7, 14, 30)))
    recent[scope] = [*recent[scope][-5:], (kind, text)]
    session = uuid.UUID(int=rng.getrandbits(128), version=4)
    return {
        "id": f"compact:{session}:{runs:08x}",
        "scope": scope,
        "kind": "summary",
        "content": _summary([(kind, text), *recent[scope][-2:]]),
        "createdAt": at,
    }


def _claims(rng: random.Random, candidates: list[dict[str, Any]]) -> list[ClaimIn]:
    """What the demo's model claims: now and then a later number replacing an older
    record's, and often a new record."""
    claims = []
    numbered = [c for c in candidates if _NUMBER.search(c["content"])]
    if numbered and rng.random() < 0.35:
        old = rng.choice(numbered)
        new_text = _NUMBER.sub(lambda m: str(int(m.group(0)) + 1), old["content"], 1)
        claims.append(ClaimIn(old["kind"], new_text, replaces=old["id"]))
    if rng.random() < 0.6:
        svc2 = rng.choice(SERVICES)
        kind2, template2 = rng.choice(TOPICS)
        text = template2.format(svc=svc2, port=rng.randint(3000, 9999), n=rng.choice((7, 14, 30)))
        claims.append(ClaimIn(kind2, text))
    return claims


async def learn_forever(
    path: str | Path,
    *,
    clock: Clock,
    stop: asyncio.Event,
    interval: float = 0.35,
    seed: int = 7,
    sleep: Sleep | None = None,
    runs: int | None = None,
) -> int:
    """Write learning traffic until ``stop`` is set, or for ``runs`` runs; returns the
    number of runs.

    Its pauses wait on the wall clock, looking at ``clock`` again every quarter second
    (the clock may run faster than real time, or stand still). Given ``sleep``, it
    awaits that instead, with the seconds of ``clock`` it means to wait: a test's
    simulated clock then moves exactly as far as the learner waits, and no wall-clock
    time passes."""
    rng = random.Random(seed)
    limit, runs = runs, 0

    async def pause(seconds: float) -> None:
        if sleep is None:
            await _pause(stop, seconds)
        else:
            await sleep(seconds)

    recent: dict[str, list[tuple[str, str]]] = {scope: [] for scope in SCOPES}
    async with await MemoryStore.open(path, clock=clock) as store:
        learning = Learning(store)
        gap_ms = HOUR_MS / store.policy.calls_per_hour
        next_call = clock()
        while not stop.is_set() and (limit is None or runs < limit):
            runs += 1
            source = _next_source(rng, recent, runs, iso(clock()))
            sid = source["id"]
            try:
                await learning.capture(source)
                await pause(interval * rng.uniform(0.3, 1.0))
                model = rng.choice(MODELS)
                allowed = _until_allowed(store, model, next_call, stop, pause, polls=sleep is None)
                if not await allowed:
                    break
                next_call = clock() + gap_ms
                run = await learning.begin(sid, model=model, reserved_usd=0.2)
                if run is None:
                    continue
                await pause(interval * rng.uniform(0.5, 1.5))
                if rng.random() < 0.2:
                    await learning.fail(run, rng.choice(FAILURES), jitter=rng)
                    continue
                await learning.finish(
                    run,
                    _claims(rng, run.candidates),
                    model=model,
                    diagnostic={"protocol": 2, "model": model, "outputBytes": 120},
                    charged_usd=round(rng.uniform(0.004, 0.02), 6),
                    input_tokens=rng.randint(1500, 4000),
                    output_tokens=rng.randint(40, 300),
                )
            except Exception:
                await pause(interval)
            await pause(interval)
    return runs


async def _until_allowed(
    store: MemoryStore,
    model: str,
    not_before: float,
    stop: asyncio.Event,
    pause: Callable[[float], Awaitable[None]],
    *,
    polls: bool,
) -> bool:
    """Wait until pi would make a call to ``model``: at ``not_before`` at the earliest,
    and only while its budget line says available. False: stopped first. ``polls``:
    the store's clock is not the one ``pause`` waits on, so look again soon."""
    while not stop.is_set():
        now = store.now_ms()
        budget = await budget_status(store, model)
        if budget.state == "available" and now >= not_before:
            return True
        until = budget.until if budget.state == "waiting" and budget.until else not_before
        wait = max(max(until, not_before) - now, 10) / 1000
        await pause(min(0.25, wait) if polls else wait)
    return False


async def _pause(stop: asyncio.Event, seconds: float) -> None:
    try:
        await asyncio.wait_for(stop.wait(), timeout=seconds)
    except TimeoutError:
        pass
