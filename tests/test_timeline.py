"""The Timeline view: its figures against the fixture's own history, its keys, its plot.

The records counted at a column's end are checked against the forward replay of
``test_past`` (an oracle independent of the backward walk); events and runs
against plain reads of the fixture's tables.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from test_live import pin_elsewhere
from test_past import events, logged, replayed_forward
from test_snapshots import SIZES, then

from memevo_tui.app.dashboard import Dashboard
from memevo_tui.dialogs.confirm import ConfirmScreen
from memevo_tui.term.compat.testing import notifications
from memevo_tui.views.diff import DiffScreen
from memevo_tui.views.timeline import ZOOMS, TimelineView
from memevo_tui.widgets.diff_list import DiffList
from memevo_tui.widgets.timeline_chart import Panel, TimelineChart, column_cells, heights
from store import Memory, MemoryStore, fixed_clock
from store.js import parse_ms
from store.past.timeline import DAY_MS, buckets, run_source, runs
from store.records.rows import listed_from_data

from apphelpers import (
    last_event,
    make_app,
    memory_list,
    opened,
    press,
    select,
    settle,
    snapshot_copy,
    stored,
    until,
    wait_loaded,
)
from conftest import FIXTURE_NOW

NOW = parse_ms(FIXTURE_NOW) or 0.0
UNPINNED = "e665359dabc60f842b48881d"  # an active, unpinned, fresh infra fact
OLD = "359cfc5bb42243f25a16b237"  # unpinned, unchanged in the fixture's last day


def dashboard(app: Any) -> Dashboard:
    assert isinstance(app.screen, Dashboard)
    return app.screen


def timeline(app: Any) -> TimelineView:
    view = app.screen.query_one(TimelineView)
    assert isinstance(view, TimelineView)
    return view


def chart(app: Any) -> TimelineChart:
    found = app.screen.query_one(TimelineChart)
    assert isinstance(found, TimelineChart)
    return found


def states_then(path: Path, when: float) -> Counter[str]:
    """The oracle: each record's state at ``when``, from the forward replay."""
    return Counter(listed_from_data(r, when).state for r in replayed_forward(path, when).values())


# ---------------------------------------------------------------- the figures


def test_buckets_are_whole_days_back_to_back_ending_today() -> None:
    for zoom in ZOOMS:
        columns = buckets(NOW, zoom.days, zoom.count)
        assert len(columns) == zoom.count
        assert columns[-1].end == NOW and columns[-1].last == int(NOW // DAY_MS)
        for a, b in pairwise(columns):
            assert b.first == a.last + 1 and a.end == b.start - 1
            assert a.last - a.first + 1 == zoom.days


def test_a_run_s_event_names_its_source() -> None:
    assert run_source("anthropic/claude: compact:abc:12") == "compact:abc:12"
    assert run_source("a: b: src-1; weaker replacements withheld=2") == "src-1"
    assert (
        run_source("odd: x; weaker replacements withheld=lots")
        == "x; weaker replacements withheld=lots"
    )
    assert run_source("forget") is None and run_source(None) is None


async def test_runs_are_counted_on_their_day_with_the_spend_reported(realistic: Path) -> None:
    con = sqlite3.connect(realistic)
    try:
        sources = {
            i: (state, failed_at, json.loads(d).get("reportedUsd"))
            for i, state, failed_at, d in con.execute(
                "SELECT id, state, failed_at, diagnostic FROM sources"
            )
        }
    finally:
        con.close()
    done: Counter[int] = Counter()
    failed: Counter[int] = Counter()
    usd: Counter[int] = Counter()
    for _, e in events(realistic):
        if e["actor"] == "model":
            day = int((parse_ms(e["at"]) or 0) // DAY_MS)
            source_id = e["reason"].split(": ")[-1]
            done[day] += 1
            usd[day] += sources[source_id][2] or 0
    for state, failed_at, spent in sources.values():
        if state == "failed" and failed_at:
            failed[failed_at // DAY_MS] += 1
            usd[failed_at // DAY_MS] += spent or 0
    store = await MemoryStore.open(realistic, read_only=True, clock=fixed_clock(FIXTURE_NOW))
    try:
        found = await runs(store, 0, NOW)
    finally:
        await store.close()
    assert {d: r.done for d, r in found.items() if r.done} == dict(done)
    assert {d: r.failed for d, r in found.items() if r.failed} == dict(failed)
    for day, spent in usd.items():
        assert found[day].usd == pytest.approx(spent)
    assert sum(done.values()) == 97 and sum(failed.values()) == 14


def test_a_bar_stacks_its_series_to_the_eighth_of_a_cell() -> None:
    # 10 of a over 6 of b, 16 in all, over 2 rows: each unit is an eighth
    cells = column_cells([("a", 10), ("b", 6)], scale=1.0, rows=2)
    assert cells == [("█", "a", ""), ("▂", "a", "b")]
    cells = column_cells([("a", 4), ("b", 0), ("c", 2)], scale=1.0, rows=2)
    assert cells == [("▄", "a", "c"), (" ", "", "")]
    assert column_cells([("a", 3)], scale=8 / 3, rows=1) == [("█", "a", "")]
    assert heights([Panel("A", ("a",), [], weight=3), Panel("B", ("b",), [])], 9) == [7, 2]
    assert heights([Panel("A", ("a",), []), Panel("B", ("b",), [])], 1) == [1, 1]


# ---------------------------------------------------------------- the view


async def test_the_cursor_s_column_counts_the_records_as_they_were(realistic: Path) -> None:
    """T shows the last 12 months a week a column; the cursor starts on this week; each
    column's counts are the forward replay's at its end; enter on a past column turns
    the dial there and shows the memory list of then."""
    app = make_app(realistic)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await press(pilot, "T")
        view = timeline(app)
        assert dashboard(app).active == "timeline"
        assert len(view.buckets) == 52 and chart(app).cursor == 51
        for i in (51, 40, 25, 10):
            b = view.buckets[i]
            assert view.stood[b.end].counts == dict(states_then(realistic, b.end)), i
        status = str(app.screen.query_one("#status-line").render())
        assert "2026-10-26 to 11-01 · 205 records" in status
        await press(pilot, *["left"] * 20)
        b = view.buckets[31]
        assert chart(app).cursor == 31
        truth = replayed_forward(realistic, b.end)
        heading = str(app.screen.query_one("#timeline-heading").render())
        assert f"{len(truth)} records" in heading
        await press(pilot, "enter")
        await until(pilot, lambda: app.state.past is not None, "the dial in the past")
        await settle(pilot)
        assert dashboard(app).active == "memories"
        assert app.state.as_of == b.end
        assert {r.id for r in app.state.rows if isinstance(r, Memory)} == set(truth)
        await press(pilot, "T", "G", "enter")  # today's column: back to now
        assert app.state.as_of is None and len(app.state.rows) == 205


async def test_plus_and_minus_zoom_and_the_cursor_keeps_its_day(realistic: Path) -> None:
    app = make_app(realistic)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await press(pilot, "T", "left", "left")  # the week of 10-12 to 10-18
        day = timeline(app).buckets[chart(app).cursor].last
        await press(pilot, "plus")
        view = timeline(app)
        assert ZOOMS[view.zoom].label == "6 months" and len(view.buckets) == 26
        assert view.buckets[chart(app).cursor].last == day
        await press(pilot, "plus", "plus")
        assert ZOOMS[view.zoom].days == 1 and len(view.buckets) == 28
        b = view.buckets[chart(app).cursor]
        assert b.first == b.last and b.first <= day  # the week's last day is out of range
        events_that_day = sum(
            1 for _, e in events(realistic) if int((parse_ms(e["at"]) or 0) // DAY_MS) == b.first
        )
        assert f"{events_that_day} events" in str(
            app.screen.query_one("#timeline-heading").render()
        )
        await press(pilot, "plus")
        assert "Already at the closest zoom" in notifications(app)[-1].message
        await press(pilot, *["minus"] * 4)
        assert ZOOMS[view.zoom].label == "4 years" and len(view.buckets) == 52
        before = min(b.end for b in view.buckets)
        assert view.stood[view.buckets[0].end].counts == {}  # before the first event
        assert before < parse_ms("2024-08-23T12:00:00.000Z")  # type: ignore[operator]


async def test_a_change_pi_makes_is_counted_in_this_week(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await press(pilot, "T")
        view = timeline(app)
        week = view.buckets[-1].end
        pinned = view.stood[week].counts["pinned"]
        older = {when: s for when, s in view.stood.items() if when < NOW}
        pin_elsewhere(realistic, UNPINNED)
        await until(
            pilot,
            lambda: any(
                s.counts.get("pinned") == pinned + 1
                for w, s in view.stood.items()
                if w == view.buckets[-1].end
            ),
            "this week's count to take the pin",
        )
        # the weeks before it were not counted again: the past did not change
        assert all(view.stood[when] is s for when, s in older.items())


# ---------------------------------------------------------------- the look


@SIZES
def test_timeline(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=then("T", "left", "left"))


# ---------------------------------------------------------------- D: the diff as a list


def oracle_diff(path: Path, start: float, end: float) -> tuple[set[str], set[str]]:
    """The ids added and changed between the two moments, by the forward replay."""
    a, b = replayed_forward(path, start), replayed_forward(path, end)
    added = set(b) - set(a)
    changed = {i for i in set(a) & set(b) if logged(a[i]) != logged(b[i])}
    return added, changed


async def test_d_lists_the_diff_and_enter_shows_the_record_as_it_was(realistic: Path) -> None:
    start = parse_ms("2025-06-01T00:00:00.000Z") or 0
    end = parse_ms("2026-03-14T00:00:00.000Z") or 0
    added, changed = oracle_diff(realistic, start, end)
    assert added and changed
    async with opened(realistic) as (app, pilot):
        await pilot.press("D", *"2025-06-01 2026-03-14", "enter")
        await until(pilot, lambda: isinstance(app.screen, DiffScreen), "the diff")
        await settle(pilot)
        rows = app.screen.query_one(DiffList).rows
        assert {r.id for r in rows if r.what == "added"} == added
        assert {r.id for r in rows if r.what == "changed"} == changed
        assert not [r for r in rows if r.what == "removed"]
        summary = str(app.screen.query_one("#diff-summary").render())
        assert f"{len(added)} added · {len(changed)} changed · 0 removed" in summary
        first = next(i for i, r in enumerate(rows) if r.what == "changed")
        await press(pilot, *["j"] * first)
        row = rows[first]
        detail = str(app.screen.query_one("#diff-detail").render())
        for name in row.fields:
            assert f"{name}: " in detail
        await press(pilot, "y")
        assert app.clipboard == row.id
        await press(pilot, "enter")
        await until(pilot, lambda: app.state.past is not None, "the dial at the diff's end")
        await settle(pilot)
        assert isinstance(app.screen, Dashboard) and app.screen.active == "memories"
        assert app.state.as_of == end
        shown = memory_list(app).highlighted
        then = replayed_forward(realistic, end)[row.id]
        assert isinstance(shown, Memory) and shown.id == row.id
        assert shown.revision == then["revision"] and shown.content == then["content"]


async def test_u_in_the_diff_undoes_the_record_s_newest_change_in_the_range(
    realistic: Path,
) -> None:
    async with opened(realistic) as (app, pilot):
        await select(pilot, OLD)
        await press(pilot, "p")  # a change of ours, now
        pinned = last_event(realistic)
        await pilot.press("D", *"-1d", "enter")
        await until(pilot, lambda: isinstance(app.screen, DiffScreen), "the diff")
        await settle(pilot)
        rows = app.screen.query_one(DiffList).rows
        at = next(i for i, r in enumerate(rows) if r.id == OLD)
        assert rows[at].what == "changed" and "layer" in rows[at].fields
        await press(pilot, *["j"] * at, "u")
        assert isinstance(app.screen, ConfirmScreen)  # History's preview, then the undo
        await press(pilot, "y")
        assert last_event(realistic)["reason"] == f"Undo {pinned['id']}"
        assert stored(realistic, OLD)["layer"] != "pinned"


async def test_the_diff_refuses_a_backward_range_and_a_moment_the_log_cannot_give(
    realistic: Path,
) -> None:
    app = make_app(realistic)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await press(pilot, "D", *"2026-03-14 2025-06-01", "enter")
        assert isinstance(app.screen, Dashboard)
        assert "FROM is after TO" in notifications(app)[-1].message
        await press(pilot, "D", *"yesterday-ish", "enter")
        assert notifications(app)[-1].severity == "error"
        assert isinstance(app.screen, Dashboard) and app.is_running


@SIZES
def test_diff_screen(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    keys = ("D", *"2026-10-01 2026-10-20", "enter", "j", "j")
    assert snap_compare(app, terminal_size=size, run_before=then(*keys))


def test_each_zoom_says_its_column_in_plain_words() -> None:
    from memevo_tui.views.timeline import ZOOMS

    assert [z.each for z in ZOOMS] == ["a day", "a day", "a week", "a week", "every 4 weeks"]


def test_help_names_a_binding_with_several_keys_once() -> None:
    from memevo_tui.dialogs.help import key_rows
    from memevo_tui.widgets.timeline_chart import TimelineChart

    table = key_rows([("timeline", TimelineChart.BINDINGS)], {})
    keys = [str(c) for c in table.columns[0].cells]
    assert "  +" in keys and "  + / +" not in keys
