"""Opening and reading the upstream fixtures (STORE.md §1.2, §2)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import sqlite3
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from store import (
    CannotOpen,
    CorruptRow,
    Event,
    Memory,
    MemoryLoad,
    MemoryStore,
    ReadOnly,
    Refused,
    UnsupportedSchema,
)
from store.learning.status import status
from store.reads import Reads

from conftest import FIXTURES, copy_fixture

FUTURE_SHA = "c602e7cd6603030e16084b1d6011bb52ffe4231a6025d3c8ffe4ed052e1f087c"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def test_realistic_reads_every_record(
    realistic: Path, fixture_clock: Callable[[], float]
) -> None:
    async with await MemoryStore.open(realistic, clock=fixture_clock) as store:
        load = await store.load_memories()
        assert len(load.memories) == 205 and load.corrupt == ()
        assert Counter(m.kind for m in load.memories) == {
            "fact": 79, "decision": 51, "project_state": 50, "preference": 25
        }  # fmt: skip
        assert Counter(m.status for m in load.memories) == {
            "provisional": 179, "confirmed": 7, "forgotten": 15, "conflicted": 4
        }  # fmt: skip
        assert sum(1 for m in load.memories if m.reinforced_at) == 22
        assert sum(1 for m in load.memories if m.search_terms) == 22
        assert sum(1 for m in load.memories if m.suppressed_hashes) == 9
        events = await store.events(limit=None)
        assert len(events) == 246 and all(isinstance(e, Event) for e in events)
        assert Counter(e.actor for e in events if isinstance(e, Event)) == {
            "migration": 1, "local": 118, "model": 97, "manual": 30
        }  # fmt: skip
        assert [e.rowid for e in events if isinstance(e, Event)] == sorted(
            (e.rowid for e in events if isinstance(e, Event)), reverse=True
        )
        sources = await store.sources()
        assert len(sources) == 118
        assert len(await store.model_calls()) == 31
        assert len(await store.receipts()) == 11
        assert await store.blocked_count() == 26
        assert len(await store.route_health()) == 5


async def test_the_origins_are_every_records_scope_read_without_parsing_a_row(
    realistic: Path, hostile: Path
) -> None:
    """``origins`` (what ``history --project`` looks a project up in) is the set of the
    records' scopes, read from the column alone; a corrupt row's column counts too."""
    async with await MemoryStore.open(realistic, read_only=True) as store:
        load = await store.load_memories()
        assert await store.origins() == {m.scope for m in load.memories}
        assert len(await store.origins()) >= 3
    async with await MemoryStore.open(hostile, read_only=True) as store:
        load = await store.load_memories()
        assert {m.scope for m in load.memories} <= await store.origins()


async def test_a_whole_read_leaves_no_rows_behind_in_the_connections_thread(
    realistic: Path,
) -> None:
    """aiosqlite's thread keeps the last answer it handed over until the next
    statement: after a load of every row, none of the rows read may stay alive there
    (at 100,000 records they were 84 MB of a CLI search's memory)."""
    import gc
    import tracemalloc

    async with await MemoryStore.open(realistic, read_only=True) as store:
        tracemalloc.start()
        try:
            load = await store.load_memories()  # one statement: every row at once
            gc.collect()
            snapshot = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        kept = snapshot.filter_traces([tracemalloc.Filter(True, "*aiosqlite*")])
        held = sum(s.size for s in kept.statistics("filename"))
        assert len(load.memories) == 205
        assert held < 20_000, held  # the rows' text alone is over 150,000 bytes


async def test_record_history_and_paging(realistic: Path) -> None:
    async with await MemoryStore.open(realistic, read_only=True) as store:
        history = await store.events(memory_id="e770102c650f925453bff652", limit=None)
        reasons = [e.reason for e in history if isinstance(e, Event)]
        assert reasons[0] == "Undo 5b662d35-df1b-454f-9871-761e31bfc61a"
        assert any(r.startswith("Feedback unhelpful") for r in reasons)
        first = await store.events(limit=10)
        second = await store.events(limit=10, before_rowid=first[-1].rowid)  # type: ignore[union-attr]
        assert {e.id for e in first}.isdisjoint({e.id for e in second})
        assert len(second) == 10


async def test_status_figures_match_the_manifest(
    realistic: Path, fixture_clock: Callable[[], float]
) -> None:
    async with await MemoryStore.open(realistic, clock=fixture_clock) as store:
        report = await status(store)
    assert report.memory_rows == 205
    assert report.queue.sources_by_state == {"done": 97, "pending": 5, "running": 2, "failed": 14}
    assert (report.queue.failed_or_paused, report.queue.paused, report.queue.retrying) == (14, 5, 9)
    assert report.queue.calls_last_24h == 31
    assert report.problems == ()
    assert sum(report.queue.failure_classes.values()) == 14
    assert report.queue.failure_classes["invalid_output"] == 2


async def test_hostile_corrupt_rows_are_reported_not_raised(hostile: Path) -> None:
    async with await MemoryStore.open(hostile) as store:
        load = await store.load_memories()
        assert len(load.memories) == 30
        assert {c.id for c in load.corrupt} == {"corrupt-json-0001", "corrupt-hash-0001"}
        reasons = {c.id: c.reason for c in load.corrupt}
        assert "not JSON" in reasons["corrupt-json-0001"]
        assert "fingerprint" in reasons["corrupt-hash-0001"]
        assert any(m.id == "raw-escape-0001" and "\x1b" in m.content for m in load.memories)
        events = await store.events(limit=None)
        bad = [e for e in events if isinstance(e, CorruptRow)]
        assert [e.id for e in bad] == ["corrupt-event-0001"]
        assert len(events) == 18
        assert await store.conflict_pairs() == []  # the event that is not JSON is passed over
        with pytest.raises(Refused, match="Invalid memory record"):
            await store.memory("corrupt-hash-0001")
        with pytest.raises(Refused, match="Invalid memory record"):
            await store.pin("corrupt-json-0001")
        report = await status(store)
        assert len(report.problems) == 3


async def test_future_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    target = tmp_path / "future.sqlite"
    shutil.copyfile(FIXTURES / "future-schema.sqlite", target)
    target.chmod(0o600)
    assert _sha(target) == FUTURE_SHA
    for read_only in (False, True):
        with pytest.raises(UnsupportedSchema, match="'99'"):
            await MemoryStore.open(target, read_only=read_only)
    assert _sha(target) == FUTURE_SHA


async def test_older_schema_opens_read_only_with_a_reason(realistic: Path) -> None:
    con = sqlite3.connect(realistic)
    con.execute("UPDATE metadata SET value='6' WHERE key='schema'")
    con.commit()
    con.close()
    async with await MemoryStore.open(realistic) as store:
        assert store.read_only and "open it in pi first" in store.read_only_reason
        assert len((await store.load_memories()).memories) == 205
        with pytest.raises(ReadOnly, match="open it in pi first"):
            await store.pin("3968293cbac7923e0e4edb5e")


async def test_read_only_mode_refuses_writes(realistic: Path) -> None:
    before = _sha(realistic)
    async with await MemoryStore.open(realistic, read_only=True) as store:
        with pytest.raises(ReadOnly, match="read-only"):
            await store.forget("3968293cbac7923e0e4edb5e")
    assert _sha(realistic) == before


async def test_unwritable_file_opens_read_only(realistic: Path) -> None:
    realistic.chmod(0o400)
    async with await MemoryStore.open(realistic) as store:
        assert store.read_only and store.read_only_reason == "the file is not writable"


async def test_file_mode_is_never_widened(realistic: Path) -> None:
    realistic.chmod(0o640)
    async with await MemoryStore.open(realistic) as store:
        await store.unpin("3968293cbac7923e0e4edb5e")
    assert realistic.stat().st_mode & 0o777 == 0o600
    for side in ("-wal", "-shm"):
        path = Path(str(realistic) + side)
        if path.exists():
            assert path.stat().st_mode & 0o077 == 0


@pytest.mark.parametrize("kind", ["missing", "directory", "symlink", "not-sqlite", "empty-sqlite"])
async def test_bad_paths_are_refused_without_creating_anything(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "memory.sqlite"
    if kind == "directory":
        path.mkdir()
    elif kind == "symlink":
        real = tmp_path / "real.sqlite"
        shutil.copyfile(FIXTURES / "realistic.sqlite", real)
        path.symlink_to(real)
    elif kind == "not-sqlite":
        path.write_text("hello")
    elif kind == "empty-sqlite":
        sqlite3.connect(path).close()
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(CannotOpen):
        await MemoryStore.open(path)
    assert sorted(os.listdir(tmp_path)) == before


@pytest.mark.unit  # aiosqlite's connection thread
@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read-only"])
async def test_an_open_cancelled_at_any_step_leaves_no_connection(
    realistic: Path, monkeypatch: pytest.MonkeyPatch, read_only: bool
) -> None:
    """A quit while the store is opening cancels the open: each connection it made
    must be closed, or its (non-daemon) thread keeps the process from exiting."""
    made: list[aiosqlite.Connection] = []
    real_connect, real_execute = aiosqlite.connect, aiosqlite.Connection._execute
    cancel_at: list[int] = []
    calls = 0

    def connect(*args: Any, **kwargs: Any) -> aiosqlite.Connection:
        made.append(real_connect(*args, **kwargs))
        return made[-1]

    async def execute(self: aiosqlite.Connection, fn: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls in cancel_at:  # a real cancellation, delivered at this very await
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
        return await real_execute(self, fn, *args, **kwargs)  # type: ignore[no-untyped-call]

    monkeypatch.setattr(aiosqlite, "connect", connect)
    monkeypatch.setattr(aiosqlite.Connection, "_execute", execute)
    async with await MemoryStore.open(realistic, read_only=read_only):
        steps = calls
    assert steps >= 3
    for step in range(1, steps + 1):
        made.clear()
        calls, cancel_at[:] = 0, [step]
        with pytest.raises(asyncio.CancelledError):
            await MemoryStore.open(realistic, read_only=read_only)
        assert made, step
        for db in made:
            db._thread.join(timeout=30)  # returns at once once the connection is closed
        left = [i for i, db in enumerate(made) if db._thread.is_alive()]
        for i in left:
            made[i].stop()  # so that a failure here does not also hang the test run
        assert not left, f"connection(s) {left} left open when cancelled at step {step}"


async def test_change_signal_sees_other_connections_only(realistic: Path) -> None:
    async with await MemoryStore.open(realistic) as store:
        assert await store.changed() is False
        assert await store.changed() is False
        await store.unpin("3968293cbac7923e0e4edb5e")
        assert await store.changed() is False  # our own commit is not "another connection"
        other = sqlite3.connect(realistic)
        other.execute(
            "INSERT OR IGNORE INTO blocked VALUES ('/elsewhere', 'abcdefabcdefabcdefabcdef')"
        )
        other.commit()
        other.close()
        assert await store.changed() is True
        assert await store.changed() is False


def _listed(load: MemoryLoad[Memory]) -> list[tuple[object, ...]]:
    return [
        (m.id, m.kind, m.content, m.scope, m.updated_at, m.reinforced_at, m.layer, m.quality)
        for m in load.memories
    ]


@pytest.mark.parametrize("name", ["realistic", "hostile"])
async def test_a_load_in_slices_reads_what_one_statement_reads(
    name: str, tmp_path: Path, fixture_clock: Callable[[], float]
) -> None:
    path = copy_fixture(f"{name}.sqlite", tmp_path)
    async with await MemoryStore.open(path, read_only=True, clock=fixture_clock) as store:
        whole = await store.load_memories()
        stored = await store.load_stored()
        for size in (1, 7, 2_000):
            sliced = await store.load_memories(yield_every=size)
            assert _listed(sliced) == _listed(whole), size
            assert [(c.id, c.reason) for c in sliced.corrupt] == [
                (c.id, c.reason) for c in whole.corrupt
            ]
    assert _listed(stored) == _listed(whole)
    rows = dict(sqlite3.connect(path).execute("SELECT id, data FROM memories").fetchall())
    assert all(m.data == json.loads(rows[m.id]) for m in stored.memories)
    assert not any(hasattr(m, "data") for m in whole.memories)  # listed records keep no JSON


@pytest.mark.unit  # the reads' slice parser
async def test_a_commit_between_slices_is_neither_doubled_nor_lost(
    realistic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process commits while the rows are read slice by slice: it rewrites a
    record already read and one not yet read (upserts keep their rowids) and adds one."""
    ids = [
        r[0] for r in sqlite3.connect(realistic).execute("SELECT id FROM memories ORDER BY rowid")
    ]
    early, late = ids[3], ids[-3]
    parse = Reads._parse_rows
    calls = 0

    def parse_then_commit(*args: Any) -> int:
        nonlocal calls
        done = parse(*args)
        calls += 1
        if calls == 1:  # pi commits after the first slice
            with sqlite3.connect(realistic) as other:
                for memory_id in (early, late):
                    other.execute(
                        "UPDATE memories SET data = json_set(data, '$.layer', 'pinned') "
                        "WHERE id = ?",
                        (memory_id,),
                    )
                other.execute(
                    "INSERT INTO memories SELECT 'added-1', scope, hash, "
                    "json_set(data, '$.id', 'added-1') FROM memories WHERE id = ?",
                    (late,),
                )
        return done

    monkeypatch.setattr(Reads, "_parse_rows", staticmethod(parse_then_commit))
    async with await MemoryStore.open(realistic, read_only=True) as store:
        await store.changed()  # the baseline, before the first slice, as the app takes it
        load = await store.load_memories(yield_every=50)
        assert calls > 2
        got = [m.id for m in load.memories]
        assert len(got) == len(set(got)) == len(ids) + 1  # each once, the new one too
        by_id = {m.id: m for m in load.memories}
        assert by_id[early].layer == "durable"  # read before the commit
        assert by_id[late].layer == "pinned" and "added-1" in by_id  # read after it
        assert await store.changed()  # so the live refresh re-reads what changed
