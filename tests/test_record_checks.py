"""The record and event checks (STORE.md §2.2.2, §2.5) on every odd value a row may hold.

A row is the output of a model and of whatever else wrote the file: every check
must answer with a reason, never raise, whatever JSON value sits where.
"""

from __future__ import annotations

import copy
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from store import CorruptRow, MemoryStore
from store._js import fp
from store.validate import event_problem, record_problem

ODD_VALUES: tuple[Any, ...] = (
    None, True, False, 0, 1, -1, 1.5, 2**70, "", " ", "\u3000", "x", "fact",
    "2026-13-01T00:00:00.000Z", [], ["x"], [1, 2], {}, {"a": 1}, "x" * 600,
)  # fmt: skip
NESTED = ("evidence", "feedback")


def _records(path: Path) -> list[dict[str, Any]]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        raws = [r[0] for r in con.execute("SELECT data FROM memories")]
    finally:
        con.close()
    records = []
    for raw in raws:
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        if record_problem(data) is None:
            records.append(data)
    return records


def _mutations(record: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The record with each of its keys, and each key of its nested objects,
    removed or set to each odd value in turn."""
    for key in record:
        gone = dict(record)
        del gone[key]
        yield gone
        for value in ODD_VALUES:
            yield {**record, key: value}
    for outer in NESTED:
        inner = record.get(outer)
        if not isinstance(inner, dict):
            continue
        paths = [(k,) for k in inner] + [
            (k, k2) for k, v in inner.items() if isinstance(v, dict) for k2 in v
        ]
        for path in paths:
            for value in (*ODD_VALUES, "missing"):
                changed = copy.deepcopy(record)
                target = changed[outer]
                for step in path[:-1]:
                    target = target[step]
                if value == "missing":
                    del target[path[-1]]
                else:
                    target[path[-1]] = value
                yield changed


def test_every_odd_value_anywhere_in_a_record_gets_a_reason(realistic: Path, hostile: Path) -> None:
    records = _records(realistic) + _records(hostile)
    tried = problems = 0
    for record in records:
        for mutated in _mutations(record):
            problem = record_problem(mutated)  # never raises
            assert problem is None or (isinstance(problem, str) and problem)
            tried += 1
            problems += problem is not None
    assert tried > 50_000 and problems > tried // 2


@pytest.mark.parametrize("key", ["kind", "layer", "status"])
@pytest.mark.parametrize("value", [[], {}, ["fact"], {"kind": "fact"}])
def test_a_list_or_an_object_where_a_word_belongs_is_invalid(
    realistic: Path, key: str, value: Any
) -> None:
    record = _records(realistic)[0]
    assert record_problem({**record, key: value}) == f"{key} is invalid"


def test_an_event_whose_actor_is_a_list_is_invalid() -> None:
    event = {"id": "e1", "scope": "s", "actor": ["model"], "reason": "r",
             "at": "2026-01-01T00:00:00.000Z", "before": [], "after": []}  # fmt: skip
    assert event_problem(event, "e1", "s") == "event actor is invalid"


async def test_a_row_whose_kind_is_a_list_is_listed_as_corrupt(realistic: Path) -> None:
    con = sqlite3.connect(realistic)
    row_id, raw = con.execute("SELECT id, data FROM memories ORDER BY rowid LIMIT 1").fetchone()
    data = json.loads(raw)
    data["kind"] = ["fact"]
    assert (
        fp(data["content"])
        == con.execute("SELECT hash FROM memories WHERE id = ?", (row_id,)).fetchone()[0]
    )
    con.execute("UPDATE memories SET data = ? WHERE id = ?", (json.dumps(data), row_id))
    con.commit()
    con.close()
    async with await MemoryStore.open(realistic, read_only=True) as store:
        for load in (await store.load_memories(), await store.load_memories(yield_every=50)):
            assert [(c.id, c.reason) for c in load.corrupt] == [(row_id, "kind is invalid")]
            assert all(isinstance(c, CorruptRow) for c in load.corrupt)
            assert len(load.memories) == 204
