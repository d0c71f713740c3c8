"""The past's changes as columns: each record's oldest change after an event, found by
a sorted search, agrees with a plain scan of the changes."""

from __future__ import annotations

import gc
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from store import CorruptRow, Memory, MemoryStore, fixed_clock
from store.js import iso, parse_ms
from store.past import intervals
from store.past.intervals import NONE, Changes

from conftest import FIXTURE_NOW

DAY = 86_400_000


@pytest.mark.parametrize("searched_from", [0, 10**9])  # numpy's search; Python's scan
def test_first_after_is_each_records_oldest_change_after_the_event(
    searched_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(intervals, "SEARCHED_FROM", searched_from)
    rng = random.Random(11)
    records = [f"r{i}" for i in range(40)]
    events = 300
    changes = Changes(events)
    made: list[tuple[int, str]] = []
    for event in range(events - 1, -1, -1):  # a walk adds them newest first
        for record_id in rng.sample([*records, "gone-now"], rng.randint(0, 3)):
            changes.add(event, record_id, 0, None, None)
            made.append((event, record_id))
    asked = [*records, "unknown"]
    for event in (-1, 0, 1, 57, 150, events - 2, events - 1):
        found = changes.first_after(asked, event)
        for record_id, change in zip(asked, found, strict=True):
            later = [i for i, (e, r) in enumerate(made) if r == record_id and e > event]
            oldest = min(later, key=lambda i: made[i][0]) if later else NONE
            assert change == oldest, (record_id, event)


def test_no_change_yet_answers_none_for_every_record() -> None:
    assert Changes(5).first_after(["a", "b"], 2) == [NONE, NONE]


def test_a_short_walk_does_not_load_numpy() -> None:
    """A walk back to the last visit, as the dashboard makes at start, undoes a few
    events: numpy (over 100 ms and 15 MB) is not loaded for it."""
    probe = (
        "import sys; from store.past.intervals import Changes; c = Changes(10); "
        "c.add(3, 'a', 0, None, None); c.first_after(['a', 'b'], 1); "
        "print('numpy' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


async def test_a_long_walk_into_the_past_freezes_what_it_keeps(
    realistic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard's walks settle the heap after a long walk (each later full
    collection would otherwise scan every version kept), and not after a short one."""
    from memevo_tui.core.state import past as walks

    store = await MemoryStore.open(realistic, read_only=True, clock=fixed_clock(FIXTURE_NOW))
    gc.unfreeze()
    try:
        load = await store.load_memories()
        rows: list[Memory | CorruptRow] = [*load.corrupt, *load.memories]
        top = await store.last_event_rowid()
        replay = walks.PastWalks()
        log, present, upto = await replay.walk(store, rows, top)
        recent = (await log.at(parse_ms(FIXTURE_NOW) or 0, present, upto)).undone
        assert recent == 0 and gc.get_freeze_count() == 0
        monkeypatch.setattr(walks, "LONG_WALK", 2)
        past = await log.at(0, present, upto)
        assert past.undone >= 2 and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        await store.close()


@pytest.mark.parametrize("fixture", ["realistic", "hostile"])
async def test_a_pair_of_moments_gives_the_diff_of_two_whole_pasts(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    """``PastLog.pair`` builds only the records that can differ between two moments;
    its diff is, record for record and field for field, the diff of the two whole
    pasts, for moments in either order and for a start given by its event."""
    from store.past.diff import diff
    from store.past.past import PastLog

    path: Path = request.getfixturevalue(fixture)
    store = await MemoryStore.open(path, read_only=True, clock=fixed_clock(FIXTURE_NOW))
    try:
        load = await store.load_memories()
        now = parse_ms(FIXTURE_NOW) or 0.0
        # and a record no event names (raw SQL), created within the moments asked
        unlogged = replace(
            load.memories[0], id="unlogged-record-00000001", created_at=iso(now - 400 * DAY)
        )
        rows: list[Memory | CorruptRow] = [*load.corrupt, *load.memories, unlogged]
        top = await store.last_event_rowid()
        rng = random.Random(4)
        shared = PastLog(store)
        seen_unlogged = 0
        for _ in range(30):
            start, end = sorted(rng.uniform(now - 900 * DAY, now) for _ in range(2))
            if rng.random() < 0.2:
                start, end = end, start
            boundary = None  # or the start's newest event, as a last visit gives it
            if rng.random() < 0.5:
                boundary = (await PastLog(store).at(start, rows, top)).boundary
            fresh = PastLog(store)
            whole = [
                await fresh.at(start, rows, top, boundary=boundary),
                await fresh.at(end, rows, top),
            ]
            pair = await shared.pair((start, boundary), end, rows, top)
            assert [p.clamped for p in pair] == [p.clamped for p in whole]
            if any(p.clamped for p in whole):
                continue
            assert sum(len(p.rows) for p in pair) <= sum(len(p.rows) for p in whole)
            got, expected = diff(*pair), diff(*whole)
            seen_unlogged += any(m.id == unlogged.id for m in (*got.added, *got.removed))
            assert [m.id for m in got.added] == [m.id for m in expected.added]
            assert [m.id for m in got.removed] == [m.id for m in expected.removed]
            assert [(c.start.id, c.fields) for c in got.changed] == [
                (c.start.id, c.fields) for c in expected.changed
            ]
        assert seen_unlogged or fixture == "hostile"  # every moment clamped there
    finally:
        await store.close()
