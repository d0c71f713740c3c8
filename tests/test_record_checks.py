"""The record and event checks (STORE.md §2.2.2, §2.5) on every odd value a row may hold.

A row is the output of a model and of whatever else wrote the file: every check
must answer with a reason, never raise, whatever JSON value sits where.
"""

from __future__ import annotations

import copy
import json
import random
import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import astuple
from pathlib import Path
from typing import Any

import pytest

from store import CorruptRow, Memory, MemoryStore
from store.js import fp
from store.records.decode import befores_fast, listed_fast
from store.records.rows import listed_from_data, parse_listed_row
from store.records.validate import event_problem, record_problem

ODD_VALUES: tuple[Any, ...] = (
    None, True, False, 0, 1, -1, 1.5, 2**70, "", " ", "\u3000", "x", "fact",
    "2026-13-01T00:00:00.000Z", [], ["x"], [1, 2], {}, {"a": 1}, "x" * 600,
)  # fmt: skip
NESTED = ("evidence", "feedback")

pytestmark = pytest.mark.unit  # the checks against a reference on the rows module's own validator


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


@pytest.mark.parametrize(
    ("revision", "valid"),
    [(1, True), (2.0, True), (2**53 - 1, True), (2**53, True), (10**20, True),
     (10**400, False), (0, False), (-1, False), (0.5, False), (1.5, False), (True, False),
     ("1", False), (None, False), (float("inf"), False)],
)  # fmt: skip
def test_a_revision_is_valid_as_javascript_judges_it(
    realistic: Path, revision: object, valid: bool
) -> None:
    """pi's ``Number.isInteger(revision) && revision > 0``: a whole double counts, a
    number of 400 digits is Infinity to JSON.parse and does not."""
    record = {**_records(realistic)[0], "revision": revision}
    problem = record_problem(record)
    assert (problem is None) is valid, problem
    if not valid:
        assert problem == "revision is not a positive integer"


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


def _outcome(parsed: Memory | CorruptRow) -> tuple[Any, ...]:
    if isinstance(parsed, CorruptRow):
        return ("corrupt", parsed.id, parsed.reason, parsed.raw)
    return ("memory", astuple(parsed))


def _reference(row_id: str, scope: str, hash_: str, raw: str, now: float) -> tuple[Any, ...]:
    """The json module alone decides: how every row was read before orjson."""
    from store.records.rows import _validated

    checked = _validated(row_id, scope, hash_, raw)
    if isinstance(checked, CorruptRow):
        return _outcome(checked)
    return _outcome(listed_from_data(checked, now))


def _rows(path: Path) -> list[tuple[str, str, str, str]]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return list(con.execute("SELECT id, scope, hash, data FROM memories"))
    finally:
        con.close()


def _special(record: dict[str, Any]) -> Iterator[str]:
    """Texts where orjson and the json module part ways, on an otherwise valid record."""
    text = json.dumps(record, ensure_ascii=False)
    body = text[:-1]
    yield body + ', "x": 123456789012345678901234567890}'  # orjson: a float
    yield body.replace('"revision": 1', '"revision": 123456789012345678901234567890') + "}"
    yield body + ', "x": 1e400}'  # orjson refuses; json: inf
    yield body + ', "x": NaN}'  # both now refuse, as JSON.parse does
    yield body + ', "x": -Infinity}'
    yield body + ', "x": "\\ud800"}'  # a lone surrogate: orjson refuses
    yield body + ', "x": ' + "[" * 3000 + "]" * 3000 + "}"  # too deep for both
    yield body + ', "kind": "bogus"}'  # a repeated key: the last one counts, in both
    yield body + ', "kind": "' + record["kind"] + '"}'
    yield text.replace('"layer"', '"layer" ')  # insignificant white space
    # where msgspec's types and pi's rules could part ways
    for revision in ("2.0", "1e0", "9007199254740993", "0", "-0", "1" + "0" * 400, "true"):
        yield body.replace('"revision": 1', f'"revision": {revision}') + "}"
    if isinstance(record.get("evidence"), dict):
        evidence = json.dumps(record["evidence"])
        for extra in (', "basis": "bogus"', ', "method": "manual"', ', "x": 1', ', "at": null'):
            yield text.replace(evidence, evidence[:-1] + extra + "}")
    twice = (
        '{"utility": {"verdict": "useful", "sourceId": "s", "at": "2026-01-01"}, '
        '"utility": {"verdict": "accurate", "sourceId": "s", "at": "2026-01-01"}}'
    )
    odd_source = '{"utility": {"verdict": "useful", "sourceId": "s\\u0001", "at": "2026"}}'
    for feedback in ("null", "{}", '{"utility": null}', '{"utility": {}}', '{"x": {}}',
                     '{"accuracy": {"verdict": "incorrect", "sourceId": "s", "at": "2026-01-01"}}',
                     twice, odd_source):  # fmt: skip
        yield body + f', "feedback": {feedback}}}'
    for hashes in ('["0123456789abcdef01234567"]', '["0123456789abcdef01234567\\n"]', "[]", "null"):
        yield body + f', "suppressedHashes": {hashes}}}'
    wide = json.dumps(["é" * 64] * 8, ensure_ascii=False)  # more than 1024 bytes
    for terms in ('["redis", "redis"]', '[" redis"]', '["x"]', '["api_key=hunter2hunter2"]',
                  wide, json.dumps(["\x01" * 60] * 8)):  # fmt: skip
        yield body + f', "searchTerms": {terms}}}'
    yield body + ', "reinforcedAt": null}'
    yield body + ', "reinforcedAt": "2026-02-30T00:00:00.000Z"}'
    yield body.replace('"scope": ', '"scope": "", "scope": ', 1) + "}"


def test_a_load_reads_every_text_as_the_json_module_alone_did(
    realistic: Path, hostile: Path
) -> None:
    rng = random.Random(16)
    now = 1_790_000_000_000.0
    rows = _rows(realistic) + _rows(hostile)
    cases = list(rows)
    for row_id, scope, hash_, raw in rows:
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        cases += [(row_id, scope, hash_, text) for text in _special(record)]
        if isinstance(record, dict) and rng.random() < 0.04:
            cases += [
                (row_id, scope, hash_, json.dumps(m, ensure_ascii=rng.random() < 0.5))
                for m in _mutations(record)
            ]
    alphabet = [*'{}[]":,.-+eE019 \t\n\\/u', "\x00", "\u2028", "\ufeff", "é", "😀"]
    for _ in range(20_000):
        row_id, scope, hash_, raw = rng.choice(rows)
        chars = list(raw)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(chars))
            chars[i : i + rng.randint(0, 1)] = rng.choice(alphabet) * rng.randint(0, 1)
        cases.append((row_id, scope, hash_, "".join(chars)))
    kinds: Counter[str] = Counter()
    fast = 0
    for case in cases:
        expected = _reference(*case, now)
        assert _outcome(parse_listed_row(*case, now)) == expected, case[3][:300]
        kinds[expected[0] if expected[0] == "memory" else expected[2].split(" (")[0]] += 1
        fast += listed_fast(*case, now) is not None
    assert kinds["memory"] > 500 and kinds["data is not JSON"] > 1000, kinds
    assert len(cases) > 30_000 and fast > 500  # the one-pass decode takes most valid rows


def test_a_fingerprint_followed_by_a_newline_is_not_one(realistic: Path) -> None:
    """pi tests ``/^[a-f0-9]{24}$/``; Python's ``$`` would match before a final newline."""
    record = _records(realistic)[0]
    assert record_problem({**record, "suppressedHashes": ["0123456789abcdef01234567"]}) is None
    bad = {**record, "suppressedHashes": ["0123456789abcdef01234567\n"]}
    assert record_problem(bad) == "suppressedHashes are invalid"


def test_nan_infinity_and_deep_nesting_are_not_json(realistic: Path) -> None:
    row_id, scope, hash_, raw = _rows(realistic)[0]
    for extra, reason in (
        ("NaN", "NaN is not JSON"),
        ("-Infinity", "-Infinity is not JSON"),
        ("[" * 5000 + "]" * 5000, "maximum recursion depth"),
    ):
        parsed = parse_listed_row(row_id, scope, hash_, raw[:-1] + f', "x": {extra}}}', 0.0)
        assert isinstance(parsed, CorruptRow) and reason in parsed.reason


def _events(path: Path) -> list[tuple[str, str, str]]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return list(con.execute("SELECT id, scope, data FROM events"))
    finally:
        con.close()


def test_the_one_pass_reading_of_an_event_only_ever_says_what_the_full_one_says(
    realistic: Path, hostile: Path
) -> None:
    """The past's walk reads each event in one pass (msgspec) and falls back to the full
    reading when it says no: whatever it accepts, ``event_problem`` accepts too, with
    every ``before`` typed exactly as ``listed_from_data`` types it."""
    rng = random.Random(23)
    now = 1_790_000_000_000.0
    events = _events(realistic) + _events(hostile)
    cases = list(events)
    for event_id, scope, raw in events:
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        befores = event.get("before") if isinstance(event, dict) else None
        if not isinstance(befores, list) or not befores or not isinstance(befores[0], dict):
            continue
        spliced = json.dumps({**event, "before": ["@@", *befores[1:]]}, ensure_ascii=False)
        for text in _special(befores[0]):
            cases.append((event_id, scope, spliced.replace('"@@"', text, 1)))
    for _ in range(5_000):
        event_id, scope, raw = rng.choice(events)
        chars = list(raw)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(chars))
            chars[i : i + rng.randint(0, 1)] = rng.choice('{}[]":,0 \\nulé') * rng.randint(0, 1)
        cases.append((event_id, scope, "".join(chars)))
    fast = 0
    for event_id, scope, raw in cases:
        found = befores_fast(raw, event_id, scope, now)
        if found is None:
            continue
        fast += 1
        data = json.loads(raw)
        assert event_problem(data, event_id, scope, after_records=False) is None, raw[:300]
        expected = [
            None if b is None else astuple(listed_from_data(b, now)) for b in data["before"]
        ]
        assert [None if m is None else astuple(m) for m in found[0]] == expected, raw[:300]
        assert found[1] == data["after"]
    assert len(cases) > 5_000 and fast > 400
