"""Parity with upstream: replaying each of the fixture's manual events gives the same JSON.

For every manual event upstream wrote into ``realistic.sqlite``, a fresh store is
seeded with the records of the event's ``before``; the same operation is run at
the same instant with the same generated ids; the event we write must be
byte-for-byte the event upstream wrote.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from store import MemoryStore, fixed_clock
from store.create import create_store
from store.js import fp, js_json

from conftest import FIXTURES


def _manual_events() -> list[dict[str, Any]]:
    con = sqlite3.connect(f"file:{FIXTURES / 'realistic.sqlite'}?mode=ro&immutable=1", uri=True)
    rows = con.execute("SELECT data FROM events ORDER BY rowid").fetchall()
    con.close()
    events = [json.loads(r[0]) for r in rows]
    return [e for e in events if e["actor"] == "manual"]


def _event_by_id(event_id: str) -> dict[str, Any]:
    con = sqlite3.connect(f"file:{FIXTURES / 'realistic.sqlite'}?mode=ro&immutable=1", uri=True)
    row = con.execute("SELECT data FROM events WHERE id=?", (event_id,)).fetchone()
    con.close()
    return dict(json.loads(row[0]))


MANUAL = _manual_events()


def _ids(event: dict[str, Any]) -> Iterator[str]:
    """The ids upstream generated for this event, in the order our code asks for them."""
    reason = event["reason"]
    if reason.startswith("Feedback "):
        yield reason.split(": ", 1)[1].removeprefix("manual:")
    elif reason == "correct":
        yield event["after"][-1]["evidence"]["sourceId"].removeprefix("manual:")
    elif reason == "resolve":
        yield event["after"][0]["feedback"]["accuracy"]["sourceId"].removeprefix("manual:")
    yield event["id"]


def _seed(path: Path, records: list[dict[str, Any]], extra_events: list[dict[str, Any]]) -> None:
    create_store(path)
    con = sqlite3.connect(path)
    for r in records:
        con.execute(
            "INSERT INTO memories VALUES (?,?,?,?)",
            (r["id"], r["scope"], fp(r["content"]), js_json(r)),
        )
    for e in extra_events:
        con.execute("INSERT INTO events VALUES (?,?,?)", (e["id"], e["scope"], js_json(e)))
    con.commit()
    con.close()


@pytest.mark.parametrize("event", MANUAL, ids=[f"{e['reason'][:24]}-{e['id'][:8]}" for e in MANUAL])
async def test_manual_event_replays_byte_for_byte(tmp_path: Path, event: dict[str, Any]) -> None:
    reason: str = event["reason"]
    extra: list[dict[str, Any]] = []
    if reason.startswith("Undo "):
        extra.append(_event_by_id(reason.removeprefix("Undo ")))
    records = [b for b in event["before"] if b is not None]
    path = tmp_path / "memory.sqlite"
    _seed(path, records, extra)
    ids = _ids(event)
    store = await MemoryStore.open(path, clock=fixed_clock(event["at"]), new_id=lambda: next(ids))
    target = event["after"][-1]["id"]
    async with store:
        if reason in ("pin", "unpin", "forget", "resolve"):
            event_id = await getattr(store, reason)(target)
        elif reason == "correct":
            event_id = await store.correct(target, event["after"][-1]["content"])
        elif reason == "conflict":
            event_id = await store.conflict(event["after"][1]["id"], event["after"][0]["id"])
        elif reason == "adopt":
            event_id = await store.adopt(target, event["after"][0]["scope"])
        elif reason.startswith("Feedback "):
            verdict = reason.split(" ")[1].rstrip(":")
            event_id = await store.feedback(event["after"][0]["id"], verdict)
        elif reason.startswith("Undo "):
            event_id = await store.undo(reason.removeprefix("Undo "))
        else:  # pragma: no cover - the fixture holds no other manual reasons
            pytest.fail(f"unexpected reason {reason}")
        assert event_id == event["id"]
        ours = await store.event(event_id)
    assert js_json(ours.data) == js_json(event)


def test_the_fixture_exercises_every_manual_verb_but_unpin() -> None:
    kinds = {e["reason"].split(" ")[0].rstrip(":") for e in MANUAL}
    assert {"pin", "forget", "correct", "conflict", "resolve", "adopt", "Feedback", "Undo"} <= kinds
    assert len(MANUAL) == 30
