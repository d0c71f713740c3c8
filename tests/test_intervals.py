"""The past's changes as columns: each record's oldest change after an event, found by
a sorted search, agrees with a plain scan of the changes."""

from __future__ import annotations

import gc
import random
from pathlib import Path

import numpy as np
import pytest

from store import CorruptRow, Memory, MemoryStore, fixed_clock
from store.intervals import NONE, Changes
from store.js import parse_ms

from conftest import FIXTURE_NOW


def test_first_after_is_each_records_oldest_change_after_the_event() -> None:
    rng = random.Random(11)
    records = [f"r{i}" for i in range(40)]
    events = 300
    changes = Changes(records, events)
    made: list[tuple[int, str]] = []
    for event in range(events - 1, -1, -1):  # a walk adds them newest first
        for record_id in rng.sample([*records, "gone-now"], rng.randint(0, 3)):
            changes.add(event, record_id, 0, None, None)
            made.append((event, record_id))
    asked = np.asarray([changes.index_of(r) for r in [*records, "unknown"]], dtype=np.int64)
    assert asked[-1] == NONE
    for event in (-1, 0, 1, 57, 150, events - 2, events - 1):
        found = changes.first_after(asked, event)
        for record_id, change in zip([*records, "unknown"], found, strict=True):
            later = [i for i, (e, r) in enumerate(made) if r == record_id and e > event]
            oldest = min(later, key=lambda i: made[i][0]) if later else NONE
            assert change == oldest, (record_id, event)


def test_no_change_yet_answers_none_for_every_record() -> None:
    changes = Changes(["a", "b"], 5)
    asked = np.asarray([changes.index_of("a"), changes.index_of("b")], dtype=np.int64)
    assert changes.first_after(asked, 2) == [NONE, NONE]


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
