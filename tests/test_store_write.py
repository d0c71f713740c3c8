"""Every write verb on a copy of realistic.sqlite: effects, refusals, and all-or-nothing."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from store import Busy, Changed, MemoryStore, Refused, StoredMemory
from store.js import fp
from store.records.validate import event_problem, record_problem

PINNED_PREF = "3968293cbac7923e0e4edb5e"  # pinned, active (terraform plan/apply)
CONFLICTED = "575c68ffb73cf92743f466c7"  # resolved earlier; now confirmed
LEGACY = "a609f59f-3938-4490-a595-55c88b4b78d7"


def _digest(path: Path) -> str:
    con = sqlite3.connect(path)
    dump = "\n".join(con.iterdump())
    con.close()
    return hashlib.sha256(dump.encode()).hexdigest()


def _rows(path: Path, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(path)
    rows = con.execute(sql, args).fetchall()
    con.close()
    return rows


async def _open(path: Path, clock: Callable[[], float]) -> MemoryStore:
    return await MemoryStore.open(path, clock=clock)


async def _revalidate(path: Path) -> None:
    """Every row still passes upstream's validation, and every event is well formed."""
    for row_id, scope, hash_, raw in _rows(path, "SELECT id, scope, hash, data FROM memories"):
        if row_id.startswith("corrupt-"):
            continue
        data = json.loads(raw)
        assert record_problem(data) is None, row_id
        assert (data["id"], data["scope"], fp(data["content"])) == (row_id, scope, hash_)
        for h in data.get("suppressedHashes", []):
            assert _rows(path, "SELECT 1 FROM blocked WHERE scope=? AND hash=?", (scope, h))
    for eid, scope, raw in _rows(path, "SELECT id, scope, data FROM events"):
        assert event_problem(json.loads(raw), eid, scope) is None, eid


async def _active(store: MemoryStore, **where: Any) -> StoredMemory:
    load = await store.load_stored()
    for m in load.memories:
        if m.active and all(getattr(m, k) == v for k, v in where.items()):
            return m
    raise AssertionError(f"no active record with {where}")


async def test_pin_and_unpin(realistic: Path, fixture_clock: Callable[[], float]) -> None:
    async with await _open(realistic, fixture_clock) as store:
        m = await _active(store, layer="durable", kind="fact")
        event_id = await store.pin(m.id)
        pinned = await store.memory(m.id)
        assert (pinned.layer, pinned.revision, pinned.updated_at) == (
            "pinned",
            m.revision + 1,
            m.updated_at,
        )
        assert pinned.quality.freshness == 1 and not pinned.quality.dormant
        event = await store.event(event_id)
        assert (event.actor, event.reason, event.scope) == ("manual", "pin", m.scope)
        assert event.before[0] == m.data and event.after[0] == pinned.data
        await store.unpin(m.id)
        assert (await store.memory(m.id)).layer == "durable"
        forgotten = next(
            x for x in (await store.load_memories()).memories if x.status == "forgotten"
        )
        with pytest.raises(Refused, match="Resolve/correct the memory first"):
            await store.pin(forgotten.id)
    await _revalidate(realistic)


async def test_feedback_rules(realistic: Path, fixture_clock: Callable[[], float]) -> None:
    async with await _open(realistic, fixture_clock) as store:
        m = await _active(store, utility=None, accuracy=None, layer="durable")
        first = await store.feedback(m.id, "useful")
        assert first is not None
        after = await store.memory(m.id)
        assert after.utility is not None and after.utility.verdict == "useful"
        assert after.updated_at == m.updated_at and after.revision == m.revision + 1
        assert list(after.data)[-1] == "feedback"
        # the same verdict again changes nothing (but leaves a receipt)
        assert await store.feedback(m.id, "useful") is None
        assert (
            len(_rows(realistic, "SELECT 1 FROM feedback_receipts WHERE memory_id=?", (m.id,))) == 2
        )
        # a replayed source id is a no-op without even a receipt
        sid = "user:replayed"
        await store.feedback(m.id, "accurate", source_id=sid)
        assert await store.feedback(m.id, "incorrect", source_id=sid) is None
        with pytest.raises(Refused, match="Invalid feedback verdict"):
            await store.feedback(m.id, "great")
        with pytest.raises(Refused, match="Invalid feedback source"):
            await store.feedback(m.id, "useful", source_id="bad\x01id")
        with pytest.raises(Refused, match="Unknown memory id"):
            await store.feedback("nope", "useful")
        # feedback about content older than the evidence date is ignored
        assert await store.feedback(m.id, "unhelpful", at="2000-01-01T00:00:00.000Z") is None


async def test_incorrect_feedback_quarantines_and_blocks(
    realistic: Path, fixture_clock: Callable[[], float]
) -> None:
    async with await _open(realistic, fixture_clock) as store:
        m = await _active(store, accuracy=None, layer="durable")
        event_id = await store.feedback(m.id, "incorrect")
        assert event_id is not None
        after = await store.memory(m.id)
        assert after.status == "conflicted" and after.state == "disputed"  # the badge
        assert _rows(
            realistic, "SELECT 1 FROM blocked WHERE scope=? AND hash=?", (m.scope, fp(m.content))
        )
        with pytest.raises(Refused, match="Resolve/correct the memory first"):
            await store.feedback(m.id, "useful")
    await _revalidate(realistic)


async def test_forget_and_correct(realistic: Path, fixture_clock: Callable[[], float]) -> None:
    async with await _open(realistic, fixture_clock) as store:
        m = await _active(store, layer="durable", kind="decision")
        await store.forget(m.id)
        gone = await store.memory(m.id)
        assert gone.status == "forgotten" and gone.updated_at == store.now_iso()
        assert gone.suppressed_hashes[-1] == fp(m.content)
        # a key the record had keeps its place; a new one is appended at the end (§2.2.1)
        keys = list(m.data)
        assert list(gone.data) == (
            keys if "suppressedHashes" in keys else [*keys, "suppressedHashes"]
        )
        # correcting revives it as a confirmed manual correction
        await store.correct(gone.id, "  The team decided to keep Postgres as the only database.  ")
        fixed = await store.memory(m.id)
        assert fixed.status == "confirmed" and fixed.content.startswith("The team decided")
        assert fixed.evidence is not None and fixed.evidence.basis == "manual_correction"
        assert fixed.evidence.source_id.startswith("manual:")
        assert not fixed.search_terms and fixed.utility is None
        hash_ = _rows(realistic, "SELECT hash FROM memories WHERE id=?", (m.id,))[0][0]
        assert hash_ == fp(fixed.content)
        for bad in ("abc", "x" * 801, "my password: 'hunter22'"):
            with pytest.raises(
                Refused, match="Correction must be 4–800 characters without credentials"
            ):
                await store.correct(m.id, bad)
    await _revalidate(realistic)


async def test_forget_retires_queued_sources_that_repeat_the_text(
    realistic: Path, fixture_clock: Callable[[], float]
) -> None:
    pending = _rows(realistic, "SELECT id, data FROM sources WHERE state='pending'")
    async with await _open(realistic, fixture_clock) as store:
        load = await store.load_memories()
        for sid, raw in pending:
            content = json.loads(raw)["content"]
            match = next((m for m in load.memories if m.active and m.content in content), None)
            if match is not None:
                await store.forget(match.id)
                state = _rows(realistic, "SELECT state FROM sources WHERE id=?", (sid,))[0][0]
                assert state == "done"
                return
    pytest.skip("no pending source repeats an active record")


async def test_conflict_and_resolve(realistic: Path, fixture_clock: Callable[[], float]) -> None:
    async with await _open(realistic, fixture_clock) as store:
        load = await store.load_memories()
        active = [m for m in load.memories if m.active and m.scope == "/home/dev/projects/webshop"]
        a, b = active[0], active[1]
        event_id = await store.conflict(a.id, b.id)
        event = await store.event(event_id)
        assert [r["id"] for r in event.after] == [b.id, a.id]
        assert (await store.memory(a.id)).status == "conflicted"
        with pytest.raises(Refused, match="Conflict needs two active memories in the same scope"):
            await store.conflict(a.id, b.id)
        other_scope = next(m for m in load.memories if m.active and m.scope != a.scope)
        c = active[2]
        with pytest.raises(Refused, match="Conflict needs two active memories in the same scope"):
            await store.conflict(c.id, other_scope.id)
        with pytest.raises(Refused, match="Conflict needs two active memories in the same scope"):
            await store.conflict(c.id, c.id)
        await store.resolve(a.id)
        resolved = await store.memory(a.id)
        assert resolved.status == "confirmed" and resolved.accuracy is not None
        assert resolved.accuracy.verdict == "accurate"
        assert list(resolved.data["feedback"]["accuracy"]) == ["verdict", "at", "sourceId"]
        with pytest.raises(Refused, match="Memory is not conflicted"):
            await store.resolve(a.id)
    await _revalidate(realistic)


async def test_adopt(realistic: Path, fixture_clock: Callable[[], float]) -> None:
    async with await _open(realistic, fixture_clock) as store:
        event_id = await store.adopt(LEGACY, "/home/dev/projects/webshop/")
        adopted = await store.memory(LEGACY)
        assert adopted.scope == "/home/dev/projects/webshop"
        assert (await store.event(event_id)).scope == "/home/dev/projects/webshop"
        with pytest.raises(Refused, match="Only unscoped legacy memories can be adopted"):
            await store.adopt(LEGACY, "/elsewhere")
        with pytest.raises(Refused, match="Only unscoped legacy memories can be adopted"):
            await store.adopt(PINNED_PREF, "/elsewhere")
    await _revalidate(realistic)


async def test_undo_restores_and_refuses_twice(
    realistic: Path, fixture_clock: Callable[[], float]
) -> None:
    async with await _open(realistic, fixture_clock) as store:
        m = await _active(store, layer="durable")
        pin_event = await store.pin(m.id)
        preview = await store.undo_preview(pin_event)
        assert preview[0][1]["layer"] == "durable"
        undo_event = await store.undo(pin_event)
        restored = await store.memory(m.id)
        assert restored.layer == "durable" and restored.revision == m.revision + 2
        assert fp(m.content) in restored.suppressed_hashes
        assert restored.active
        with pytest.raises(Refused, match="Memory changed since this event; undo refused"):
            await store.undo(pin_event)
        # an undo is itself undoable
        await store.undo(undo_event)
        assert (await store.memory(m.id)).layer == "pinned"
        with pytest.raises(Refused, match="Unknown event id"):
            await store.undo("no-such-event")
        empty = next(e for e in await store.events(limit=None) if not getattr(e, "after", True))
        with pytest.raises(Refused, match="Event has no memory changes"):
            await store.undo(empty.id)
    await _revalidate(realistic)


async def test_undo_carries_the_confirmation_stamp_forward(
    realistic: Path, fixture_clock: Callable[[], float]
) -> None:
    async with await _open(realistic, fixture_clock) as store:
        m = next(x for x in (await store.load_memories()).memories if x.reinforced_at and x.active)
        event_id = await store.pin(m.id)
        await store.undo(event_id)
        assert (await store.memory(m.id)).reinforced_at == m.reinforced_at


async def test_a_record_changed_under_you_is_refused(
    realistic: Path, fixture_clock: Callable[[], float]
) -> None:
    async with await _open(realistic, fixture_clock) as store:
        m = await _active(store, layer="durable")
        await store.pin(m.id, expected_revision=m.revision)
        before = _digest(realistic)
        with pytest.raises(Changed, match="changed since you loaded it"):
            await store.unpin(m.id, expected_revision=m.revision)
        assert _digest(realistic) == before


async def test_refusals_leave_no_trace(realistic: Path, fixture_clock: Callable[[], float]) -> None:
    before = _digest(realistic)
    async with await _open(realistic, fixture_clock) as store:
        for call in (
            store.pin("unknown-id"),
            store.resolve(PINNED_PREF),
            store.correct(PINNED_PREF, "no"),
            store.adopt(PINNED_PREF, "/x"),
            store.undo("unknown"),
        ):
            with pytest.raises(Refused):
                await call
    assert _digest(realistic) == before


async def test_busy_database_waits_then_fails_cleanly(
    realistic: Path, fixture_clock: Callable[[], float], monkeypatch: pytest.MonkeyPatch
) -> None:
    import store.opening as store_module

    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_MS", 200)
    blocker = sqlite3.connect(realistic, isolation_level=None, timeout=0.1)
    async with await _open(realistic, fixture_clock) as store:
        blocker.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(Busy, match="busy"):
                await store.unpin(PINNED_PREF)
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        await store.unpin(PINNED_PREF)
        assert (await store.memory(PINNED_PREF)).layer == "durable"


async def test_remaining_refusal_rules(
    realistic: Path, hostile: Path, fixture_clock: Callable[[], float]
) -> None:
    async with await _open(realistic, fixture_clock) as store:
        a = await _active(store, layer="durable")
        with pytest.raises(Refused, match="Conflict needs two active memories in the same scope"):
            await store.conflict(a.id, "no-such-record")
        with pytest.raises(Refused, match="Only unscoped legacy memories can be adopted"):
            await store.adopt(LEGACY, "   ")
        with pytest.raises(Refused, match="Unknown memory id"):
            await store.unpin("no-such-record")
        with pytest.raises(Refused, match="Unknown memory id"):
            await store.correct("no-such-record", "A perfectly fine correction.")
    async with await MemoryStore.open(hostile) as store:
        with pytest.raises(Refused, match="Invalid history record"):
            await store.undo("corrupt-event-0001")
        with pytest.raises(Refused, match="Invalid memory record"):
            await store.forget("corrupt-hash-0001")
        # acting on the valid rows of a store with corrupt rows still works
        valid = next(m for m in (await store.load_memories()).memories if m.active)
        assert await store.feedback(valid.id, "useful") is not None


async def test_recovery_sweep_fails_only_the_expired_lease(
    realistic: Path, fixture_clock: Callable[[], float]
) -> None:
    from store.learning.learning import Learning

    running = dict(_rows(realistic, "SELECT id, lease FROM sources WHERE state='running'"))
    assert len(running) == 2
    async with await _open(realistic, fixture_clock) as store:
        assert await Learning(store).recover_expired() == 1
    now = fixture_clock()
    for sid, lease in running.items():
        state, last_error, failures = _rows(
            realistic, "SELECT state, last_error, failures FROM sources WHERE id=?", (sid,)
        )[0]
        if lease <= now:
            assert (state, last_error, failures) == ("failed", "interrupted", 1)
        else:
            assert state == "running"
    await _revalidate(realistic)
