"""A walk of the whole event log kept between processes: adopted only while it is still
the store's, and then giving, moment for moment, what a fresh walk gives."""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from store import CorruptRow, Memory, MemoryStore, fixed_clock
from store.js import parse_ms
from store.past import events
from store.past.past import PastLog
from store.past.pastkeep import decode

from conftest import FIXTURE_NOW

Rows = list[Memory | CorruptRow]


class Shelf:
    """A keep in memory: what a second process would find in the cache directory."""

    def __init__(self) -> None:
        self.data: bytes | None = None
        self.saves = 0

    def load(self) -> bytes | None:
        return self.data

    def save(self, data: bytes) -> None:
        self.data = data
        self.saves += 1


def values(rows: Any) -> list[tuple[Any, ...]]:
    return [tuple(getattr(r, f.name) for f in fields(r)) for r in rows]


def moments(path: Path, count: int, seed: int) -> list[float]:
    con = sqlite3.connect(path)
    ats: set[str] = set()
    for (data,) in con.execute("SELECT data FROM events"):
        try:
            at = json.loads(data).get("at")
        except (ValueError, AttributeError):  # the hostile store's unreadable events
            continue
        if isinstance(at, str) and parse_ms(at) is not None:
            ats.add(at)
    con.close()
    chosen = random.Random(seed).sample(sorted(ats), min(count, len(ats)))
    return [0.0, *(parse_ms(a) or 0.0 for a in chosen), parse_ms(FIXTURE_NOW) or 0.0]


async def opened(path: Path) -> tuple[MemoryStore, Rows, int]:
    store = await MemoryStore.open(path, read_only=True, clock=fixed_clock(FIXTURE_NOW))
    load = await store.load_memories()
    return store, [*load.corrupt, *load.memories], await store.last_event_rowid()


async def agree(path: Path, shelf: Shelf, when: list[float]) -> int:
    """A log with ``shelf`` answers every moment as a fresh walk does; the events it
    undid on its first move."""
    store, rows, top = await opened(path)
    try:
        kept = PastLog(store, keep=shelf, keep_from=1)
        first = await kept.at(when[0], rows, top)
        for moment in when:
            fresh = await PastLog(store).at(moment, rows, top)
            again = await kept.at(moment, rows, top)
            assert values(again.rows) == values(fresh.rows), moment
            assert (again.boundary, again.clamped) == (fresh.boundary, fresh.clamped)
            if fresh.clamped:  # the same break, found by both
                assert (again.exact_back_to, again.stopped) == (
                    fresh.exact_back_to,
                    fresh.stopped,
                )
        return first.undone
    finally:
        await store.close()


@pytest.mark.parametrize("fixture", ["realistic", "hostile"])
async def test_a_kept_walk_is_adopted_by_the_next_process_and_agrees(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    """On the realistic store and on the hostile one (corrupt rows, an event that does
    not follow, odd rowids): the next process undoes nothing, and answers every moment
    as a fresh walk does, the break included."""
    path: Path = request.getfixturevalue(fixture)
    shelf = Shelf()
    when = moments(path, 25, 5)
    events = await agree(path, shelf, when)
    assert shelf.saves == 1 and decode(shelf.data) is not None
    assert events > 0 or fixture == "hostile"  # its newest event does not follow
    assert await agree(path, shelf, when) == 0  # nothing undone again
    assert shelf.saves == 1  # and nothing to keep anew


async def test_events_written_since_are_walked_and_the_rest_adopted(realistic: Path) -> None:
    shelf = Shelf()
    await agree(realistic, shelf, [0.0])
    store = await MemoryStore.open(realistic, clock=fixed_clock(FIXTURE_NOW))
    try:
        load = await store.load_memories()
        target = next(m for m in load.memories if m.status == "provisional" and not m.pinned)
        await store.pin(target.id)
    finally:
        await store.close()
    assert await agree(realistic, shelf, moments(realistic, 15, 6)) == 1  # the pin's event
    assert shelf.saves == 2  # kept again, with it


@pytest.mark.parametrize("damage", ["row", "event", "bytes"])
async def test_a_kept_walk_that_is_no_longer_the_stores_is_dropped(
    realistic: Path, damage: str
) -> None:
    """A record changed with no event, an event rewritten, or damaged bytes: the kept
    walk is not used, and every answer is a fresh walk's."""
    shelf = Shelf()
    when = moments(realistic, 20, 8)
    assert await agree(realistic, shelf, when) > 0
    assert await agree(realistic, shelf, when) == 0  # kept, before the damage
    con = sqlite3.connect(realistic)
    rewritten = 0.0
    if damage == "row":
        rowid, data = con.execute("SELECT rowid, data FROM memories LIMIT 1").fetchone()
        record = json.loads(data)
        record["content"] += " (edited by hand)"
        con.execute("UPDATE memories SET data = ? WHERE rowid = ?", (json.dumps(record), rowid))
    elif damage == "event":
        rowid, data = con.execute(
            "SELECT rowid, data FROM events WHERE json_extract(data, '$.before[0]') IS NOT NULL "
            "ORDER BY rowid LIMIT 1"
        ).fetchone()
        event = json.loads(data)
        event["before"][0]["content"] += " (rewritten)"
        rewritten = (parse_ms(event["at"]) or 0.0) - 1  # its before is read there
        con.execute("UPDATE events SET data = ? WHERE rowid = ?", (json.dumps(event), rowid))
    else:
        assert shelf.data is not None
        shelf.data = shelf.data[: len(shelf.data) // 2]
    con.commit()
    con.close()
    if damage == "event":
        # pi never rewrites an event (its log is append-only): a kept walk finds a
        # rewrite where it reads the event, and then walks the log afresh.
        when = [rewritten, *when]
    saves = shelf.saves
    assert await agree(realistic, shelf, when) > 0  # walked, not adopted
    assert shelf.saves == saves + 1  # and the walk made instead is kept in its place


def test_the_cache_directory_keeps_the_walk_keyed_and_refuses_other_bytes(
    realistic: Path, tmp_path: Path
) -> None:
    from memevo_tui.core.recallcache import PAST, PastCache

    cache = PastCache(realistic)
    assert cache.load() is None
    cache.save(b"the walk")
    assert cache.load() == b"the walk"
    (kept,) = (tmp_path / "cache").rglob(PAST)
    assert kept.stat().st_mode & 0o777 == 0o600
    kept.write_bytes(kept.read_bytes()[:-1] + b"!")  # changed by hand
    assert cache.load() is None


async def test_the_dashboards_dial_keeps_its_walk_for_the_next_process(
    realistic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dial's walk to the start is kept in the cache directory; a second dashboard
    process adopts it and undoes no event again."""
    from memevo_tui.core.state import DashboardState

    monkeypatch.setattr(events, "KEEP_FROM", 1)  # the fixture's log is short

    async def dial() -> int:
        state = DashboardState(realistic, clock=fixed_clock(FIXTURE_NOW))
        try:

            async def first_page(load: object, total: int) -> None:
                pass

            load, top = await state.read(first_page)
            state.replace(load, partial=False, total=len(load.memories), last_rowid=top)
            return (await state.dial_past(1.0)).undone
        finally:
            await state.close()

    assert await dial() > 0
    assert await dial() == 0


def test_as_of_keeps_its_walk_and_the_next_run_gives_the_same_answer(
    realistic: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memevo_tui.__main__ import main
    from memevo_tui.core.recallcache import PAST

    monkeypatch.setattr(events, "KEEP_FROM", 1)  # the fixture's log is short

    def listed(moment: str) -> str:
        assert main(["list", "--db", str(realistic), "--as-of", moment, "--json"]) == 0
        return capsys.readouterr().out

    fresh = listed("2024-09-01")  # a walk down to then only: nothing kept
    assert not list((tmp_path / "cache").rglob(PAST))
    listed("2000-01-01")  # the whole log walked: kept
    assert len(list((tmp_path / "cache").rglob(PAST))) == 1
    assert listed("2024-09-01") == fresh  # adopted, and the same answer
    assert main(["list", "--demo", "--as-of", "2000-01-01"]) in (0, 1)
    capsys.readouterr()
    assert len(list((tmp_path / "cache").rglob(PAST))) == 1  # never the demo's


async def test_a_short_log_is_walked_again_rather_than_kept(realistic: Path) -> None:
    store, rows, top = await opened(realistic)
    try:
        shelf = Shelf()
        await PastLog(store, keep=shelf).at(0.0, rows, top)  # 246 events: under KEEP_FROM
        assert shelf.saves == 0
    finally:
        await store.close()


async def test_the_turns_replay_keeps_its_walk_and_answers_the_same_from_it(
    realistic: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Turns view's replay walks the log on a connection of its own: its walk is
    kept too, and a replay from the kept walk gives every turn as the first did."""
    from memevo_tui.core.recallcache import PAST, SessionIndexCache
    from memevo_tui.core.turnlog import load_turns

    from conftest import FIXTURES

    monkeypatch.setattr(events, "KEEP_FROM", 1)  # the fixture's log is short

    async def replayed() -> list[Any]:
        found = await load_turns(
            realistic, fixed_clock(FIXTURE_NOW), FIXTURES / "sessions", SessionIndexCache()
        )
        return [(s.key, [(t.prompt.entry_id, t.then, t.now) for t in s.turns]) for s in found]

    from memevo_tui.core.recallcache import PastCache

    first = await replayed()  # walks back to the oldest prompt only: nothing kept
    assert not list((tmp_path / "cache").rglob(PAST))
    (next((tmp_path / "cache").rglob("turns.json"))).unlink()  # replayed, not remembered
    store = await MemoryStore.open(realistic, read_only=True, clock=fixed_clock(FIXTURE_NOW))
    try:  # as --as-of does: the whole log walked, and kept
        store.past_keep = PastCache(realistic)
        await store.replay(0.0)
    finally:
        await store.close()
    assert list((tmp_path / "cache").rglob(PAST))
    assert await replayed() == first  # replayed again, from the kept walk
