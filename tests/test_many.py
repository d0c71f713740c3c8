"""Curating many: marks and bulk actions, one undo for a batch, the review queue, what
changed since the last visit, and the time dial. Real keys, checked in the store."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import TabbedContent

from memevo_tui.app.dashboard import Dashboard
from memevo_tui.core.appstate import AppState, Batch
from memevo_tui.dialogs.confirm import ConfirmScreen
from memevo_tui.dialogs.inbox import InboxScreen
from memevo_tui.term.compat.testing import notifications
from memevo_tui.views.diff import DiffScreen
from memevo_tui.views.review import ReviewView
from memevo_tui.widgets.diff_list import DiffList
from memevo_tui.widgets.event_list import BatchRow, EventList
from memevo_tui.widgets.memory_list import MemoryList
from memevo_tui.widgets.recall_pane import RecallPane
from memevo_tui.widgets.review_list import ReviewList
from store import Memory, MemoryStore, fixed_clock
from store.records.quality import quality_of

from apphelpers import (
    DURABLE,
    dialog_text,
    event_count,
    list_view,
    make_app,
    opened,
    press,
    settle,
    stored,
    until,
    wait_loaded,
)
from conftest import FIXTURE_NOW, ROOT

DAY_MS = 86_400_000


def events_since(path: Path, count: int) -> list[dict[str, Any]]:
    con = sqlite3.connect(path)
    rows = con.execute("SELECT data FROM events ORDER BY rowid DESC LIMIT ?", (count,)).fetchall()
    con.close()
    return [json.loads(r[0]) for r in reversed(rows)]


def memories(app: Any) -> MemoryList:
    found: MemoryList = app.query_one("#memory-list", MemoryList)
    return found


async def mark_three(pilot: Any) -> list[str]:
    """Filter to infra facts and mark the first three with space, the real key."""
    app = pilot.app
    await pilot.press("slash", *"origin:infra kind:fact is:unpinned", "enter")
    await settle(pilot)
    await pilot.press("space", "j", "space", "j", "space")
    await settle(pilot)
    return [r.id for r in memories(app).rows[:3]]


async def test_three_marked_pins_are_three_upstream_pins(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        ids = await mark_three(pilot)
        assert memories(app).marked == frozenset(ids)
        assert memories(app).cells(memories(app).rows[0])["mark"] == "▸"  # a glyph, not colour
        assert "3 marked" in str(app.screen.query_one("#status-line").render())
        before = event_count(realistic)
        await press(pilot, "p")
        assert isinstance(app.screen, ConfirmScreen)  # one preview for all three
        await press(pilot, "y")
        assert event_count(realistic) == before + 3
        written = events_since(realistic, 3)
        for event, memory_id in zip(written, ids, strict=True):
            # exactly what a single p writes: one record, reason "pin", layer pinned
            assert event["actor"] == "manual" and event["reason"] == "pin"
            assert [a["id"] for a in event["after"]] == [memory_id]
            assert event["after"][0]["layer"] == "pinned"
            assert event["after"][0]["revision"] == event["before"][0]["revision"] + 1
            assert set(event) == {"id", "at", "actor", "reason", "scope", "before", "after"}
        assert memories(app).marked == frozenset()
        batches = AppState(realistic).batches()
        assert len(batches) == 1 and batches[0].events == tuple(e["id"] for e in written)


async def test_marks_survive_filtering_and_refusals_are_listed(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        ids = await mark_three(pilot)
        await pilot.press("slash", "ctrl+u", *"kind:decision", "enter")
        await settle(pilot)
        assert memories(app).marked == frozenset(ids)  # hidden by the filter, still marked
        await press(pilot, "escape")  # esc in the list drops the marks first...
        assert memories(app).marked == frozenset() and list_view(app).query == "kind:decision"
        await pilot.press("escape")  # ...then the filter
        await settle(pilot)
        # a forgotten record cannot be pinned: the preview says so, the others are pinned
        await pilot.press("a", "slash", *"state:forgotten", "enter")
        await settle(pilot)
        forgotten = memories(app).rows[0].id
        await pilot.press("space", "slash", "ctrl+u", *DURABLE, "enter")
        await settle(pilot)
        await pilot.press("space", "p")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        preview = dialog_text(dialog, 140)
        assert "refused" in preview and "Resolve/correct the memory first" in preview
        assert "1 will be written" in preview and "1 refused" in preview
        await press(pilot, "y")
        assert stored(realistic, DURABLE)["layer"] == "pinned"
        assert stored(realistic, forgotten)["layer"] != "pinned"
        toast = notifications(app)[-1].message
        assert "Pinned 1, 1 refused" in toast and "Resolve/correct the memory first" in toast


def change_elsewhere(path: Path, memory_id: str) -> None:
    """Another connection (pi) unpins the record: it changed since the batch."""
    code = textwrap.dedent(
        """
        import asyncio, sys
        from store import MemoryStore, fixed_clock

        async def main(path, memory_id):
            clock = fixed_clock("2026-11-01T12:30:00.000Z")
            async with await MemoryStore.open(path, clock=clock) as store:
                await store.unpin(memory_id)

        asyncio.run(main(sys.argv[1], sys.argv[2]))
        """
    )
    subprocess.run([sys.executable, "-c", code, str(path), memory_id], check=True, cwd=ROOT)


async def test_one_u_undoes_a_batch_and_refuses_what_changed_since(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        ids = await mark_three(pilot)
        await pilot.press("p", "y")
        await settle(pilot)
        await asyncio.to_thread(change_elsewhere, realistic, ids[1])
        await press(pilot, "h")
        history = app.query_one(EventList)
        first = history.rows[0]
        if not isinstance(first, BatchRow):  # pi's unpin is the newest event
            first = history.rows[1]
        assert isinstance(first, BatchRow) and len(first.events) == 3  # one entry
        history.cursor = history.rows.index(first)
        await settle(pilot)
        await pilot.press("enter")  # expands to its events
        await settle(pilot)
        assert all(e.id in {x.id for x in history.rows} for e in first.events)
        before = event_count(realistic)
        await press(pilot, "u")
        assert isinstance(app.screen, ConfirmScreen)
        assert "Memory changed since this event; undo refused" in dialog_text(app.screen, 140)
        await press(pilot, "y")
        assert event_count(realistic) == before + 2  # two undone, one refused
        undos = events_since(realistic, 2)
        assert all(e["reason"].startswith("Undo ") for e in undos)
        assert stored(realistic, ids[0])["layer"] == "durable"
        assert stored(realistic, ids[2])["layer"] == "durable"


async def test_a_history_filter_reads_the_journal_once_not_per_key(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await mark_three(pilot)
        await pilot.press("p", "y")
        await settle(pilot)
        await press(pilot, "h")
        remembered = app.state.remembered
        assert remembered is not None
        reads = []
        batches = remembered.batches

        def counted() -> list[Batch]:
            reads.append(1)
            return batches()

        remembered.batches = counted  # type: ignore[method-assign]
        await press(pilot, "slash", *"pin")
        history = app.query_one(EventList)
        assert isinstance(history.rows[0], BatchRow)  # still one entry for the bulk pin
        assert reads == []  # read when the write came, not at each key of the filter


async def test_the_review_queue_at_the_fixtures_now(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await press(pilot, "w")
        assert app.query_one("#tabs", TabbedContent).active == "review"
        view = app.query_one(ReviewView)
        from memevo_tui.core.review import counts

        assert counts(view.queue) == {
            "secret": 0,  # no key, token or password in any record
            "costly": 0,  # none until pi's sessions are replayed (no session folder here)
            "disputed": 1,
            "conflicted": 2,
            "not-grounded": 3,  # model-learned claims no source states
            "dormant-soon": 4,  # near the end of their kind's life, not every project state
            "duplicate": 0,
            "near-duplicate": 1,
            "unhelpful": 1,
            "failed-source": 8,
            "low-quality": 3,
        }
        assert "23 to review" in str(app.screen.query_one("#review-counts").render())
        review = app.query_one(ReviewList)
        assert [i.reason for i in review.rows[:3]] == ["disputed", "conflicted", "conflicted"]
        await pilot.press("slash", *"reason:dormant-soon", "enter")
        await settle(pilot)
        assert {i.reason for i in review.rows} == {"dormant-soon"} and len(review.rows) == 4
        soonest = review.rows[0]
        after = review.rows[1]
        await pilot.press("p")  # pin it: it no longer goes dormant, and leaves the queue
        await settle(pilot)
        assert stored(realistic, soonest.first.id)["layer"] == "pinned"
        assert review.highlighted is not None and review.highlighted.key == after.key
        await pilot.press("K")  # keep the next as it is (n opens Turns, as everywhere)
        await settle(pilot)
        assert len(review.rows) == 2 and after.key not in {i.key for i in review.rows}
    app = make_app(realistic)  # kept stays kept in the app's state directory
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_loaded(pilot)
        # The pin above is news since the last visit: the inbox opens first, and w in it
        # does nothing. Once it is closed, w shows the Review queue.
        await until(pilot, lambda: isinstance(app.screen, InboxScreen), "the inbox")
        await press(pilot, "escape", "w")
        assert app.query_one("#tabs", TabbedContent).active == "review"
        assert after.key not in {i.key for i in app.query_one(ReviewView).queue}


async def test_rebuilds_asked_while_the_queue_builds_wait_and_build_once(
    realistic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build takes seconds at 100,000 records and a thread cannot be stopped: pi's
    commits (a rebuild each) must not stack up builds. One runs at a time; those
    asked meanwhile become one more, from the newest records."""
    import threading

    from memevo_tui.core.review import build as real_build

    release = threading.Event()
    running: list[int] = []
    calls: list[int] = []
    most = [0]
    lock = threading.Lock()

    def slow_build(*args: Any, **kwargs: Any) -> Any:
        with lock:
            running.append(1)
            calls.append(len(args[0]))
            most[0] = max(most[0], len(running))
        try:
            release.wait(30)
            return real_build(*args, **kwargs)
        finally:
            with lock:
                running.pop()

    async with opened(realistic) as (app, pilot):
        await press(pilot, "w")
        view = app.query_one(ReviewView)
        await until(pilot, lambda: not view.busy, "the first queue")
        shown = list(view.queue)
        monkeypatch.setattr("memevo_tui.views.review.build", slow_build)
        for _ in range(5):
            view.rebuild()
        await until(pilot, lambda: len(calls) == 1, "the first rebuild's build")
        release.set()
        await until(pilot, lambda: not view.busy, "the queue, built again")
        assert most[0] == 1  # never two at once
        assert len(calls) == 2  # the one running, then one for the four asked meanwhile
        assert [i.key for i in view.queue] == [i.key for i in shown]


CAPTURE_AND_FAIL = textwrap.dedent(
    """
    import asyncio, sys
    from store import MemoryStore, fixed_clock
    from store.learning.learning import Learning

    SUMMARY = (
        "## Goal\\nShip the shop.\\n\\n## Key Decisions\\n"
        "- Use Caddy for TLS termination on every host.\\n\\n"
        "## Critical Context\\n- The staging database listens on port 6543.\\n"
    )

    async def main(path):
        clock = fixed_clock("2026-11-02T09:00:00.000Z")
        async with await MemoryStore.open(path, clock=clock) as store:
            learning = Learning(store)
            await learning.capture({"id": "compact:inbox-test:0001", "scope":
                "/home/dev/projects/webshop", "kind": "summary", "content": SUMMARY,
                "createdAt": "2026-11-02T09:00:00.000Z"})
            run = await learning.begin("compact:inbox-test:0001", model="test/model")
            await learning.fail(run, "timeout")

    asyncio.run(main(sys.argv[1]))
    """
)


async def test_since_your_last_visit(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        assert not isinstance(app.screen, InboxScreen)  # the first visit: nothing to say
        await pilot.press("q")
    visit = AppState(realistic).visit()
    assert visit is not None and visit.rowid == 246
    subprocess.run([sys.executable, "-c", CAPTURE_AND_FAIL, str(realistic)], check=True, cwd=ROOT)
    async with opened(realistic, now="2026-11-02T10:00:00.000Z") as (app, pilot):
        await settle(pilot)
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)
        texts = [line.text for line in inbox.lines]
        assert inbox.heading == "Since 2026-11-01 12:00 UTC"
        assert "2 new memories" in texts and "1 learning run failed" in texts
        assert any(t.endswith("gone dormant") for t in texts)  # a day passed
        new = {
            "Use Caddy for TLS termination on every host.",
            "The staging database listens on port 6543.",
        }
        # first, the diff from the records as they were at the visit to now
        assert texts[0].startswith("The diff since then: 2 added, 0 changed, 0 removed")
        await press(pilot, "enter")
        diff = app.screen
        assert isinstance(diff, DiffScreen) and diff.diff.start == visit.at_ms
        assert {r.record.content for r in diff.query_one(DiffList).rows} == new
        await press(pilot, "escape")
        await until(pilot, lambda: isinstance(app.screen, Dashboard), "the dashboard")
        assert isinstance(app.screen, Dashboard)
        app.screen.open_inbox(inbox.heading, inbox.lines)  # the summary again
        await settle(pilot)
        await press(pilot, "j", "enter")  # the next line: the new memories
        shown = memories(app).rows
        assert len(shown) == 2 and {r.content for r in shown if isinstance(r, Memory)} == new


async def test_the_time_dial(realistic: Path) -> None:
    clock = fixed_clock(FIXTURE_NOW)
    async with await MemoryStore.open(realistic, read_only=True, clock=clock) as store:
        load = await store.load_memories()
    later = clock() + 30 * DAY_MS
    turning = {
        m.id
        for m in load.memories
        if m.active and not m.quality.dormant and quality_of(m, later).dormant
    }
    assert turning  # the fixture has records that go dormant within 30 days
    target = next(m for m in load.memories if m.id in turning and m.kind == "project_state")
    word = max((w for w in target.content.split() if w.isalpha()), key=len)
    async with opened(realistic) as (app, pilot):
        await pilot.press("i", "slash", *word, "enter")
        await settle(pilot)
        pane = app.query_one(RecallPane)

        def reason() -> str | None:
            assert pane.result is not None
            found = [
                c
                for c in (*pane.result.selected, *pane.result.left_out)
                if c.memory.id == target.id
            ]
            return found[0].reason if found else "absent"

        assert reason() != "dormant"  # now it may be injected
        await pilot.press("escape", "m", "t", *"+30d", "enter")
        await settle(pilot)
        assert app.state.as_of == later
        rows = {r.id: r for r in memories(app).rows if isinstance(r, Memory)}
        assert all(rows[i].state == "dormant" for i in turning if i in rows)
        status = str(app.screen.query_one("#status-line").render())
        assert "as of 2026-12-01 12:00 (simulated" in status
        # the review queue, as of then
        await press(pilot, "w")
        queue = app.query_one(ReviewView).queue
        assert not ({i.first.id for i in queue if i.reason == "dormant-soon"} & turning)
        # the recall preview re-ran: as of then, pi would leave it out as dormant
        assert reason() == "dormant"
        # a write key writes nothing, and says why
        await press(pilot, "m")
        before = event_count(realistic)
        await press(pilot, "p")
        assert event_count(realistic) == before
        assert "time dial" in notifications(app)[-1].message
        await press(pilot, "0")
        assert app.state.as_of is None
        assert "simulated" not in str(app.screen.query_one("#status-line").render())


def test_the_cli_takes_as_of(realistic: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "memevo_tui", "list", "--json", "--as-of", "+30d", "--db",
         str(realistic)],
        capture_output=True, text=True, cwd=ROOT, check=True,
    )  # fmt: skip
    dormant = sum(1 for r in json.loads(run.stdout) if r["quality"]["dormant"])
    now = subprocess.run(
        [sys.executable, "-m", "memevo_tui", "list", "--json", "--db", str(realistic)],
        capture_output=True, text=True, cwd=ROOT, check=True,
    )  # fmt: skip
    assert dormant > sum(1 for r in json.loads(now.stdout) if r["quality"]["dormant"])


@pytest.mark.unit  # the review queue's near-duplicate search
async def test_near_duplicates_are_looked_for_through_rare_words_only(
    realistic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hundreds of records of one template (every word shared by more than ``RARE``
    of them) are not paired with each other, which would cost the square of their
    number; two records that share their rare words still are."""
    from dataclasses import replace

    from memevo_tui.core import review

    async with await MemoryStore.open(realistic, read_only=True) as store:
        base = next(m for m in (await store.load_memories()).memories if m.active)
    template = "the nightly build deploys the cart service to staging"
    records = [replace(base, id=f"t{i}", content=f"{template} w{i}") for i in range(400)]
    records += [
        replace(base, id="a", content="kyverno audits the cart api quotas nightly at two"),
        replace(base, id="b", content="kyverno audits the cart api quotas nightly at three"),
    ]
    tried = 0
    share = review.overlap

    def counted(x: frozenset[str], y: frozenset[str]) -> float:
        nonlocal tried
        tried += 1
        return share(x, y)

    monkeypatch.setattr(review, "overlap", counted)
    pairs = [(a.id, b.id) for a, b, _ in review._near_duplicates(records)]
    assert pairs == [("a", "b")]
    assert tried < 10 * len(records)  # not one per pair of the 400 (79,800)


async def test_a_view_is_built_when_first_shown_by_key_or_by_click(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        dashboard = app.screen
        assert isinstance(dashboard, Dashboard)
        assert set(dashboard.views) == {"memories"}  # the others are built when shown
        await pilot.click("#--content-tab-review")  # a click, not the key: built all the same
        await settle(pilot)
        assert app.query_one("#tabs", TabbedContent).active == "review"
        assert "23 to review" in str(app.screen.query_one("#review-counts").render())
        await press(pilot, "h", "w")  # shown again: the same view, not a second one
        assert len(app.screen.query(ReviewView)) == 1
        assert set(dashboard.views) == {"memories", "review", "history"}
