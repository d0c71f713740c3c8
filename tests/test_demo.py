"""The demo store is a complete, valid schema-7 store that shows every feature."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from store import Event, MemoryStore, Source, fixed_clock
from store.demo.demo import build_demo
from store.learning.status import status
from store.records.validate import event_problem, record_problem

from conftest import DEMO_NOW


async def test_demo_covers_every_state(demo_store: Path) -> None:
    async with await MemoryStore.open(demo_store, clock=fixed_clock(DEMO_NOW)) as store:
        load = await store.load_memories()
        assert load.corrupt == () and len(load.memories) >= 35
        mems = load.memories
        assert {m.kind for m in mems} == {"fact", "preference", "decision", "project_state"}
        assert {m.status for m in mems} == {"provisional", "confirmed", "forgotten", "conflicted"}
        assert {m.layer for m in mems} == {"durable", "pinned"}
        assert {m.state for m in mems} >= {
            "fresh",
            "aging",
            "dormant",
            "pinned",
            "forgotten",
            "conflicted",
        }
        verdicts = {s.verdict for m in mems for s in (m.utility, m.accuracy) if s}
        assert verdicts == {"useful", "unhelpful", "accurate", "incorrect"}
        assert sum(1 for m in mems if m.reinforced_at) >= 3
        bases = {m.quality.basis for m in mems}
        assert bases == {"summary", "user_statement", "tool_observation", "manual_correction"}
        events = [e for e in await store.events(limit=None) if isinstance(e, Event)]
        assert {e.actor for e in events} == {"local", "model", "manual"}
        assert any(e.reason.startswith("Undo ") for e in events)
        sources = [s for s in await store.sources() if isinstance(s, Source)]
        assert {s.state for s in sources} == {"pending", "running", "done", "failed"}
        assert any(s.paused for s in sources)
        assert {s.kind for s in sources} == {"summary", "user", "progress"}
        report = await status(store)
        assert report.problems == ()
        assert report.queue.calls_last_24h > 0 and report.queue.input_tokens_24h > 0
        calls = await store.model_calls()
        assert {c.outcome for c in calls} >= {"done", "failed", "running"}


def test_demo_rows_pass_upstream_validation(demo_store: Path) -> None:
    con = sqlite3.connect(demo_store)
    assert con.execute("SELECT value FROM metadata WHERE key='schema'").fetchone() == ("7",)
    assert con.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    for row_id, raw in con.execute("SELECT id, data FROM memories"):
        assert record_problem(json.loads(raw)) is None, row_id
    for eid, scope, raw in con.execute("SELECT id, scope, data FROM events"):
        assert event_problem(json.loads(raw), eid, scope) is None, eid
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    con.close()


def test_demo_is_deterministic(tmp_path: Path, demo_template: Path) -> None:
    again = build_demo(tmp_path / "again.sqlite", now_ms=fixed_clock(DEMO_NOW)())

    def dump(path: Path) -> str:
        con = sqlite3.connect(path)
        text = "\n".join(con.iterdump())
        con.close()
        return hashlib.sha256(text.encode()).hexdigest()

    assert dump(again) == dump(demo_template)


async def test_demo_store_accepts_curation(
    demo_store: Path, fixture_clock: Callable[[], float]
) -> None:
    async with await MemoryStore.open(demo_store) as store:
        target = next(
            m for m in (await store.load_memories()).memories if m.active and not m.pinned
        )
        await store.pin(target.id)
        assert (await store.memory(target.id)).pinned


def test_demo_events_are_in_time_order(demo_store: Path) -> None:
    """As in a store pi wrote, later rows are later events."""
    con = sqlite3.connect(demo_store)
    times = [
        json.loads(raw)["at"] for (raw,) in con.execute("SELECT data FROM events ORDER BY rowid")
    ]
    con.close()
    assert times == sorted(times)
