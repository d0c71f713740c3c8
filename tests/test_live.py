"""Live updates: commits by another process show up without a key press."""

from __future__ import annotations

import asyncio
import itertools
import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from memevo_tui.views.learning import LearningView
from memevo_tui.widgets.event_list import EventList
from memevo_tui.widgets.memory_list import MemoryList
from memevo_tui.widgets.source_detail import SourceDetail
from memevo_tui.widgets.source_list import SourceList
from store import Memory, MemoryStore, Source, fixed_clock, system_clock
from store.demo.demo_learner import learn_forever
from store.records.validate import event_problem, record_problem

from apphelpers import (
    HeldClock,
    drawn_text,
    last_event,
    make_app,
    opened,
    press,
    settle,
    snapshot_copy,
    until,
    wait_loaded,
)
from conftest import FIXTURE_NOW

DURABLE = "e665359dabc60f842b48881d"

PIN_FROM_ANOTHER_PROCESS = textwrap.dedent(
    """
    import asyncio, sys
    from store import MemoryStore, fixed_clock

    async def main(path, memory_id):
        clock = fixed_clock("2026-11-01T12:00:00.000Z")
        async with await MemoryStore.open(path, clock=clock) as store:
            await store.pin(memory_id)

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


def pin_elsewhere(path: Path, memory_id: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PIN_FROM_ANOTHER_PROCESS, str(path), memory_id],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


def row(app: Any, memory_id: str) -> Memory | None:
    for r in app.query_one("#memory-list", MemoryList).rows:
        if r.id == memory_id and isinstance(r, Memory):
            return r
    return None


async def test_another_process_commit_appears_without_a_key_press(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await pilot.press("h")  # history loaded, so new events must appear at its top
        await settle(pilot)
        before = row(app, DURABLE)
        assert before is not None and not before.pinned
        cursor_before = app.query_one(EventList).cursor
        await asyncio.to_thread(pin_elsewhere, realistic, DURABLE)
        await until(pilot, lambda: (r := row(app, DURABLE)) is not None and r.pinned, "the pin")
        events = app.query_one(EventList)
        await until(pilot, lambda: events.rows[0].reason == "pin", "the pin event")  # type: ignore[union-attr]
        assert events.cursor == cursor_before + 1  # the cursor stays on its event
        assert "last change" in str(app.query_one("#status-line").render())


async def test_ctrl_space_pauses_and_resumes_live_updates(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await pilot.press("ctrl+space")
        assert app.state.live is False
        assert app.state.store is not None
        version = await app.state.store.data_version()
        await asyncio.to_thread(pin_elsewhere, realistic, DURABLE)
        for _ in range(3):  # poll ticks, as the timer runs them: paused, they read nothing
            app.live_tick()
            await app.workers.wait_for_complete()
            await settle(pilot)
        # the commit is visible (the workers are named, should a read still hold a snapshot)...
        assert await app.state.store.data_version() != version, list(app.workers)
        r = row(app, DURABLE)
        assert r is not None and not r.pinned  # ...but paused, nothing refreshed
        await pilot.press("ctrl+space")
        await until(pilot, lambda: (r := row(app, DURABLE)) is not None and r.pinned, "the pin")


async def test_learning_view(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await press(pilot, "l")
        sources = app.query_one(SourceList)
        assert len(sources.rows) == 118
        assert "pending 5 · running 2 · failed 14 (paused 5)" in app.query_one(LearningView).summary
        # walk to a source with model calls; its calls show in the detail pane
        with_calls = next(
            i for i, s in enumerate(sources.rows) if isinstance(s, Source) and s.calls
        )
        await pilot.press(*["j"] * with_calls)
        await settle(pilot)
        from rich.console import Console

        console = Console(width=120, record=True)
        console.print(app.query_one(SourceDetail).body)
        text = console.export_text()
        assert "Model calls" in text and "Records its runs changed" in text
        source = sources.rows[with_calls]
        assert isinstance(source, Source)
        assert app.state.store is not None
        calls = await app.state.store.model_calls(source.id)
        assert calls and calls[0].provider in text and calls[0].outcome in text


class SimulatedClock:
    """A clock that moves only when the learner waits, exactly as far as it waits:
    the learner's runs take no wall-clock time, and their times are known."""

    def __init__(self, start_ms: float) -> None:
        self.now = start_ms

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds * 1000
        await asyncio.sleep(0)


def model_call_times(path: Path) -> list[int]:
    con = sqlite3.connect(path)
    try:
        return [int(at) for (at,) in con.execute("SELECT at FROM model_calls ORDER BY at")]
    finally:
        con.close()


async def run_learner(path: Path, clock: SimulatedClock, runs: int) -> int:
    """The demo learner for ``runs`` runs on ``clock``."""
    return await learn_forever(
        path, clock=clock, stop=asyncio.Event(), sleep=clock.sleep, runs=runs
    )


async def test_demo_learner_leaves_the_store_valid_after_many_runs(demo_store: Path) -> None:
    """The learner as `--demo --live` runs it, for 40 runs of its own clock, then every
    row re-validated."""
    clock = SimulatedClock(system_clock())
    assert await run_learner(demo_store, clock, 40) == 40
    assert len(model_call_times(demo_store)) > 0
    async with await MemoryStore.open(demo_store) as store:
        load = await store.load_memories()
        assert load.corrupt == ()
    con = sqlite3.connect(demo_store)
    for memory_id, raw in con.execute("SELECT id, data FROM memories"):
        assert record_problem(json.loads(raw)) is None, memory_id
    for eid, scope, raw in con.execute("SELECT id, scope, data FROM events"):
        assert event_problem(json.loads(raw), eid, scope) is None, eid
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    states = {s for (s,) in con.execute("SELECT DISTINCT state FROM sources")}
    con.close()
    assert {"done", "failed"} <= states


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_learning_view_stalled_run(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    """The run whose lease expired, highlighted: its own glyph and word, and its lease."""
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_loaded(pilot)
        await press(pilot, "l")
        rows = app.query_one(SourceList).rows
        stalled = next(i for i, s in enumerate(rows) if s.id.startswith("compact:d0d967e6"))
        await pilot.press(*["j"] * stalled, *(["z"] if size[0] < 110 else []))
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_learning_view_snapshot(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_loaded(pilot)
        await press(pilot, "l")
        await pilot.press("j", "j")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


async def test_enter_on_a_source_shows_its_records(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        owners = {m.source_entry_id for m in app.state.rows if isinstance(m, Memory)}
        await press(pilot, "l")
        sources = app.query_one(SourceList)
        index = next(i for i, s in enumerate(sources.rows) if s.id in owners)
        target = sources.rows[index].id
        await pilot.press(*["j"] * index, "enter")
        await settle(pilot)
        shown = app.query_one("#memory-list", MemoryList).rows
        assert shown and app.query_one("#tabs").active == "memories"  # type: ignore[attr-defined]
        assert all(
            isinstance(m, Memory)
            and target in (m.source_entry_id, m.evidence.source_id if m.evidence else "")
            for m in shown
        )


def finish_and_stamp(path: Path) -> tuple[str, str]:
    """What a learning run's finish writes for a record it confirmed (§5.6), in one
    transaction as pi commits it: the source is done, and the record's
    ``reinforcedAt`` moves to the source's ``createdAt``, with no event."""
    from store.js import iso, js_json, parse_ms

    con = sqlite3.connect(path, isolation_level=None)
    try:
        con.execute("BEGIN IMMEDIATE")
        rowid, data = con.execute(
            "SELECT rowid, data FROM sources WHERE state!='done' ORDER BY rowid DESC LIMIT 1"
        ).fetchone()
        stamp = parse_ms(json.loads(data)["createdAt"])
        assert stamp is not None
        for memory_id, raw in con.execute("SELECT id, data FROM memories ORDER BY rowid"):
            record = json.loads(raw)
            anchor = max(
                parse_ms(record["updatedAt"]) or 0, parse_ms(record.get("reinforcedAt")) or 0
            )
            if record["status"] in ("provisional", "confirmed") and record["layer"] != "pinned" \
                    and anchor < stamp:  # fmt: skip
                record["reinforcedAt"] = iso(stamp)
                con.execute("UPDATE memories SET data=? WHERE id=?", (js_json(record), memory_id))
                con.execute("UPDATE sources SET state='done', lease=0 WHERE rowid=?", (rowid,))
                con.execute("COMMIT")
                return memory_id, iso(stamp)
        raise AssertionError("no record older than the source")
    finally:
        con.close()


async def test_a_confirmation_stamp_shows_live_though_it_writes_no_event(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        events_before = app.state.last_rowid
        memory_id, stamp = await asyncio.to_thread(finish_and_stamp, realistic)
        await until(
            pilot,
            lambda: (
                (r := app.state.find(memory_id)) is not None
                and isinstance(r, Memory)
                and r.reinforced_at == stamp
            ),
            "the stamp",
        )
        await until(
            pilot,
            lambda: (shown := row(app, memory_id)) is not None and shown.reinforced_at == stamp,
            "the list showing the new version",
        )
        assert app.state.last_rowid == events_before  # no event was written for it


async def test_a_live_change_reads_nothing_for_hidden_views(
    realistic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once visited, the Review and Learning views go back to reading only when shown:
    a commit by pi while they are hidden costs no read of every source (the review
    queue reads them all), and showing them again reads the queue afresh."""
    async with opened(realistic) as (app, pilot):
        for key in ("w", "l", "m"):  # visit the review queue and the learning view
            await pilot.press(key)
            await settle(pilot)
        store = app.state.store
        assert store is not None
        reads: list[int | None] = []
        sources = store.sources

        async def counted(*args: Any, **kwargs: Any) -> Any:
            reads.append(kwargs.get("limit"))
            return await sources(*args, **kwargs)

        monkeypatch.setattr(store, "sources", counted)
        await asyncio.to_thread(pin_elsewhere, realistic, DURABLE)
        await until(pilot, lambda: (r := row(app, DURABLE)) is not None and r.pinned, "the pin")
        await settle(pilot)
        assert reads == []
        await press(pilot, "l")
        assert reads  # shown again: the queue is read afresh
        assert len(app.query_one(SourceList).rows) == 118


LEASED = "compact:795dcd22-7de5-4e75-8ff1-41e3e510989e:81a0cabc"  # its lease runs out at
LEASE_ENDS = 1793534497000  # 12:01:37, 97 s after the fixtures' moment


async def test_a_run_whose_lease_runs_out_reads_stalled_then_without_a_key(
    realistic: Path,
) -> None:
    """The clock passing a lease's expiry redraws the row and its pane: no key, no
    reload. (The clock here stands a moment before the lease ends, then runs on.)"""
    clock = HeldClock(LEASE_ENDS - 1500)
    async with opened(realistic, clock=clock) as (app, pilot):
        await press(pilot, "l")
        source_list = app.query_one(SourceList)
        at = source_list.index_of(LEASED)
        assert at is not None
        await pilot.press(*["j"] * at)
        await settle(pilot)
        row = source_list.rows[at]
        assert source_list.highlighted is row
        assert source_list.cells(row)["state"] == "▶ running"
        assert "lease held until" in drawn_text(app.query_one(SourceDetail).body)
        clock.release()
        await until(
            pilot,
            lambda: app.query_one(SourceList).cells(row)["state"] == "⊘ stalled",
            "the row to read stalled once its lease ran out",
        )
        await until(
            pilot,
            lambda: "stalled" in drawn_text(app.query_one(SourceDetail).body).casefold(),
            "the pane to say so too",
        )
        assert app.state.now() >= LEASE_ENDS


async def test_ctrl_r_in_learning_reads_the_queue_again(realistic: Path) -> None:
    """With live updates paused, a change to the queue shows after ctrl+r."""
    async with opened(realistic) as (app, pilot):
        await pilot.press("l", "ctrl+space")
        await settle(pilot)
        source_list = app.query_one(SourceList)
        assert (
            source_list.cells(source_list.rows[source_list.index_of(LEASED) or 0])["state"]
            == "▶ running"
        )
        con = sqlite3.connect(realistic)
        con.execute("UPDATE sources SET state='done', lease=0 WHERE id=?", (LEASED,))
        con.commit()
        con.close()
        await pilot.press("ctrl+r")
        await until(
            pilot,
            lambda: any(
                s.id == LEASED and source_list.cells(s)["state"] == "✓ done"
                for s in source_list.rows
            ),
            "the reloaded queue",
        )


async def test_demo_learner_keeps_to_the_calls_an_hour_of_its_policy(demo_store: Path) -> None:
    """At most ``callsPerHour`` model calls in any hour of the store's clock, and never
    one while pi's budget line says waiting (here 5 an hour: a call every 12 minutes)."""
    (demo_store.parent / "recovery.json").write_text('{"callsPerHour": 5}\n')
    start = system_clock()
    await run_learner(demo_store, SimulatedClock(start), 12)
    times = [at for at in model_call_times(demo_store) if at >= start]
    assert len(times) == 12  # each run made its call, none skipped
    hour = 3_600_000
    for i, at in enumerate(times):
        assert sum(1 for later in times[i:] if later < at + hour) <= 5, times
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= hour / 5 - 1, gaps  # spread over the hour, not in a burst


def test_next_change_is_the_next_moment_a_row_reads_differently() -> None:
    from dataclasses import replace

    from memevo_tui.widgets.source_list import countdown, next_change

    running = Source(
        0, "a", "", "compact", "", "", (), "running", 1, LEASE_ENDS, 0, 0, 0, "", 0, {}, 0, 0,
        (), 0, 0, False, {},
    )  # fmt: skip
    for left, wait, reads in [
        (97_000, 7_001, "1m"),  # with 89.999 s left it reads "89s"
        (89_500, 501, "89s"),
        (630_000, 30_001, "10m"),
        (5_400_000, 1, "1h"),  # with 5_399.999 s left it reads "89m"
        (7_300_000, 100_001, "2h"),
        (0, None, "due"),
    ]:
        now = LEASE_ENDS - left
        assert countdown(LEASE_ENDS, now) == reads, left
        assert next_change([running], now) == (wait if left else None), left
    pending = replace(running, state="pending", retry_at=LEASE_ENDS)
    assert next_change([pending], LEASE_ENDS - 2500) == 501
    assert next_change([replace(pending, paused=True)], LEASE_ENDS - 2000) is None
    assert next_change([replace(running, state="done")], LEASE_ENDS - 2000) is None


def status_line(app: Any) -> str:
    return str(app.screen.query_one("#status-line").render())


async def test_history_puts_the_cursor_on_this_dashboards_own_write(realistic: Path) -> None:
    """After a write here, History opens on its event, not on the one the cursor was on."""
    async with opened(realistic) as (app, pilot):
        await pilot.press("h", "j", "j")
        await settle(pilot)
        events = app.query_one(EventList)
        assert events.cursor == 2
        await pilot.press("m", "p", "h")
        await settle(pilot)
        pin = last_event(realistic)
        assert pin["reason"] == "pin"
        assert events.cursor == 0 and events.highlighted is not None
        assert events.highlighted.id == pin["id"]


async def test_history_keeps_its_event_when_pi_writes_and_counts_the_new(
    realistic: Path,
) -> None:
    """A pi write leaves the cursor on its event, and the status line says "1 new
    above" until the cursor goes to the top."""
    async with opened(realistic) as (app, pilot):
        await pilot.press("h", "j", "j")
        await settle(pilot)
        events = app.query_one(EventList)
        on = events.highlighted
        assert on is not None
        await asyncio.to_thread(pin_elsewhere, realistic, DURABLE)
        await until(pilot, lambda: events.rows[0].id == last_event(realistic)["id"], "pi's pin")
        await settle(pilot)
        assert events.highlighted is on and events.cursor == 3
        assert "1 new above" in status_line(app)
        await press(pilot, "g")
        assert events.cursor == 0 and "new above" not in status_line(app)


async def test_learning_keeps_its_source_and_counts_new_ones_above(realistic: Path) -> None:
    """A new source takes neither the cursor nor a line of the screen: with the cursor
    on the first source, or lower down, it stays on its source, what is on screen holds
    still, and the status line counts what arrived above until g goes to it."""
    async with opened(realistic) as (app, pilot):
        await press(pilot, "l")
        sources = app.query_one(SourceList)
        assert sources.cursor == 0
        first = sources.highlighted
        await asyncio.to_thread(capture_from_another_process, realistic, 1)
        await until(pilot, lambda: sources.rows[0].id.endswith(":00000001"), "the new source")
        await settle(pilot)
        assert first is not None and sources.highlighted is not None
        assert sources.highlighted.id == first.id and sources.cursor == 1
        assert sources.scroll_y == 1  # its screen line, as before
        assert "1 new above" in status_line(app)
        await pilot.press("j", "j")
        await settle(pilot)
        on = sources.highlighted
        await asyncio.to_thread(capture_from_another_process, realistic, 2)
        await until(pilot, lambda: sources.rows[0].id.endswith(":00000002"), "the second")
        await settle(pilot)
        assert sources.highlighted is not None and on is not None
        assert sources.highlighted.id == on.id and sources.cursor == 4
        assert "2 new above" in status_line(app)
        await press(pilot, "g")
        assert sources.cursor == 0 and "new above" not in status_line(app)


def capture_from_another_process(path: Path, n: int) -> None:
    """pi queues a source for learning (a second connection, as pi is)."""
    from store.learning.learning import Learning

    async def main() -> None:
        async with await MemoryStore.open(path, clock=fixed_clock(FIXTURE_NOW)) as store:
            await Learning(store).capture(
                {
                    "id": f"compact:00000000-0000-4000-8000-{n:012d}:{n:08x}",
                    "scope": "global",
                    "kind": "summary",
                    "content": f"Arrival {n} at port {4000 + n}.",
                    "createdAt": FIXTURE_NOW,
                }
            )

    asyncio.run(main())
