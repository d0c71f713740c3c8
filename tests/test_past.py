"""The store's past, replayed from the event log, checked against the fixture's own history.

The oracle is independent of the code under test: it replays ``realistic.sqlite``'s
events *forward*, oldest first, setting each record to its ``after`` until the moment;
the code walks *backward* from the current rows, setting each record to its ``before``.
The two agree on every field the log records only if both are right. The fixture was
built on a controlled clock, so each event's ``at`` is when its change happened.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

from memevo_tui.__main__ import main
from memevo_tui.term.compat.testing import notifications
from store import CorruptRow, Memory, MemoryStore, NotInLog, fixed_clock
from store.js import iso, parse_ms
from store.past.events import UNLOGGED_JSON
from store.past.past import PastLog
from store.past.timeline import DAY_MS, activity, standing, weeks
from store.records.model import retimed
from store.records.rows import listed_from_data

from apphelpers import (
    event_count,
    make_app,
    memory_list,
    opened,
    press,
    select,
    settle,
    until,
    wait_loaded,
)
from conftest import FIXTURE_NOW

MOMENTS = [
    "2024-08-23T12:00:00.000Z",  # the first event's moment: it has happened
    "2024-12-31",
    "2025-06-01",
    "2025-11-15T08:30:00.000Z",
    "2026-03-14",
    "2026-06-01",
    "2026-10-01",
    "2026-11-01T06:00:00.000Z",
]


def events(path: Path) -> list[tuple[int, dict[str, Any]]]:
    con = sqlite3.connect(path)
    try:
        return [(r, json.loads(d)) for r, d in con.execute("SELECT rowid, data FROM events")]
    finally:
        con.close()


def replayed_forward(path: Path, when: float) -> dict[str, dict[str, Any]]:
    """The records at ``when``: every event up to it applied, oldest first."""
    state: dict[str, dict[str, Any]] = {}
    for _, event in sorted(events(path)):
        if (parse_ms(event["at"]) or 0) > when:
            break
        for after in event["after"]:
            state[after["id"]] = after
    return state


def logged(record: dict[str, Any]) -> dict[str, Any]:
    """The fields the log records; an empty list is the same as none."""
    return {k: v for k, v in record.items() if k not in UNLOGGED_JSON and v != []}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("moment", MOMENTS)
def test_list_as_of_gives_exactly_the_records_that_existed_then(
    realistic: Path, capsys: pytest.CaptureFixture[str], moment: str
) -> None:
    when = parse_ms(moment if "T" in moment else f"{moment}T00:00:00.000Z")
    assert when is not None
    truth = replayed_forward(realistic, when)
    assert 0 < len(truth) < 205
    code, out, err = run(
        capsys, "list", "--db", str(realistic), "--as-of", moment, "--all", "--json"
    )
    assert code == 0, err
    shown = {item["memory"]["id"]: item for item in json.loads(out)}
    assert set(shown) == set(truth)
    for record_id, item in shown.items():
        assert logged(item["memory"]) == logged(truth[record_id]), record_id
        # the confirmation stamp: as its newest change at or before then wrote it
        assert item["memory"].get("reinforcedAt") == truth[record_id].get("reinforcedAt")
        assert (parse_ms(item["memory"]["createdAt"]) or 0) <= when
        assert item["quality"]["ageDays"] >= 0 or item["memory"].get("reinforcedAt")


def test_before_every_event_the_store_was_empty(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "list", "--db", str(realistic), "--as-of", "1970-01-01", "--json")
    assert (code, json.loads(out)) == (0, [])
    code, out, err = run(capsys, "show", "a100f0dec266627497b0e637", "--db", str(realistic),
                         "--as-of", "2024-09-01")  # fmt: skip
    assert code == 1 and "none existed as of 2024-09-01" in err


def test_the_future_is_the_same_rows_with_the_clock_moved(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, now, _ = run(capsys, "list", "--db", str(realistic), "--all", "--json")
    _, later, _ = run(capsys, "list", "--db", str(realistic), "--all", "--json", "--as-of", "+30d")
    assert [i["memory"] for i in json.loads(now)] == [i["memory"] for i in json.loads(later)]
    assert now != later  # the ages moved


def test_show_and_status_as_of_use_the_same_past(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    when = "2025-06-01"
    truth = replayed_forward(realistic, parse_ms(f"{when}T00:00:00.000Z") or 0)
    some = sorted(truth)[3]
    code, out, _ = run(capsys, "show", some, "--db", str(realistic), "--as-of", when, "--json")
    assert code == 0 and logged(json.loads(out)["memory"]) == logged(truth[some])
    code, out, _ = run(capsys, "status", "--db", str(realistic), "--as-of", when)
    assert code == 0 and out.startswith(f"{len(truth)} memories;")


def tamper(path: Path, rowid: int, change: Any) -> None:
    con = sqlite3.connect(path)
    try:
        (raw,) = con.execute("SELECT data FROM events WHERE rowid=?", (rowid,)).fetchone()
        con.execute("UPDATE events SET data=? WHERE rowid=?", (change(raw), rowid))
        con.commit()
    finally:
        con.close()


def wrong_after(raw: str) -> str:
    data = json.loads(raw)
    data["after"][0]["content"] += " (edited by hand)"
    return json.dumps(data)


def not_an_event(raw: str) -> str:
    return '["not an event"]'  # JSON (pi's index reads it), but no event


@pytest.mark.parametrize("damage", [wrong_after, not_an_event], ids=["mismatch", "unreadable"])
def test_an_event_that_cannot_be_undone_stops_the_walk_and_is_never_guessed(
    realistic: Path, capsys: pytest.CaptureFixture[str], damage: Any
) -> None:
    history = sorted(events(realistic))
    rowid, event = next((r, e) for r, e in history[120:] if e["after"])
    moment = event["at"]
    newer = next(e["at"] for r, e in history if r > rowid)
    truth = replayed_forward(realistic, parse_ms(newer) or 0)
    tamper(realistic, rowid, damage)
    # after the damaged event: exact
    code, out, err = run(
        capsys, "list", "--db", str(realistic), "--as-of", newer, "--all", "--json"
    )
    assert code == 0, err
    assert {i["memory"]["id"] for i in json.loads(out)} == set(truth)
    # before it: refused in one line, naming how far back the store is exact
    older = history[10][1]["at"]
    code, out, err = run(capsys, "list", "--db", str(realistic), "--as-of", older, "--all")
    assert (code, out) == (2, "")
    exact = moment if damage is wrong_after else newer
    assert f"exact back to {exact}; older changes unreadable (event {event['id']}: " in err
    assert err.count("\n") == 1


def values(rows: Sequence[object]) -> list[tuple[Any, ...]]:
    """Each record's fields (records compare by identity)."""
    return [tuple(getattr(r, f.name) for f in fields(r)) for r in rows]  # type: ignore[arg-type]


async def test_checkpoints_give_the_same_past_as_a_walk_from_now(realistic: Path) -> None:
    """Moments visited in any order, from checkpoints every few events, agree with a fresh
    walk from now each time."""
    store = await MemoryStore.open(realistic, read_only=True, clock=fixed_clock(FIXTURE_NOW))
    try:
        load = await store.load_memories()
        rows: list[Memory | CorruptRow] = [*load.corrupt, *load.memories]
        top = await store.last_event_rowid()
        moments = sorted({e["at"] for _, e in events(realistic)})
        rng = random.Random(7)
        chosen = rng.sample(moments, 25)
        shared = PastLog(store, checkpoint_every=7)
        walked = 0
        for moment in chosen:
            when = parse_ms(moment) or 0
            fresh = await PastLog(store).at(when, rows, top)
            again = await shared.at(when, rows, top)
            assert values(again.rows) == values(fresh.rows) and again.boundary == fresh.boundary
            walked += again.undone
            assert again.undone <= fresh.undone
        from_now = [(await PastLog(store).at(parse_ms(m) or 0, rows, top)).undone for m in chosen]
        assert walked < sum(from_now)
    finally:
        await store.close()


async def test_a_store_opened_as_of_a_past_moment_writes_nothing(realistic: Path) -> None:
    when = parse_ms("2025-06-01T00:00:00.000Z") or 0
    store = await MemoryStore.open(realistic, clock=fixed_clock("2025-06-01"), as_of=when)
    try:
        assert store.read_only and "as of 2025-06-01" in store.read_only_reason
        with pytest.raises(Exception, match=r"(?i)read-only"):
            await store.pin(sorted(replayed_forward(realistic, when))[0])
    finally:
        await store.close()
    assert NotInLog.cause == "not in the event log"


@pytest.mark.parametrize(
    ("start", "end"), [("2025-01-01", "2025-06-01"), ("2026-09-01", "2026-10-01"), ("-90d", None)]
)
def test_diff_names_exactly_the_records_added_and_changed(
    realistic: Path, capsys: pytest.CaptureFixture[str], start: str, end: str | None
) -> None:
    now = parse_ms(FIXTURE_NOW) or 0

    def moment(text: str | None) -> float:
        if text is None:
            return now
        if text.startswith("-"):
            return now - int(text[1:-1]) * 86_400_000
        return parse_ms(f"{text}T00:00:00.000Z") or 0

    before = replayed_forward(realistic, moment(start))
    after = replayed_forward(realistic, moment(end))
    changed = {
        i: {k for k in set(a) | set(before[i]) if a.get(k) != before[i].get(k)}
        - {k for k in ("searchTerms", "suppressedHashes") if not a.get(k) and not before[i].get(k)}
        for i, a in after.items()
        if i in before and logged(a) != logged(before[i])
    }
    argv = ["diff", start, *([end] if end else []), "--db", str(realistic)]
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert {a["id"] for a in d["added"]} == set(after) - set(before)
    assert {c["id"] for c in d["changed"]} == set(changed)
    assert d["removed"] == []  # pi never deletes a record
    for c in d["changed"]:
        named = {k.split(".")[0] for k in c["fields"]}
        # evidence too: a correction's event carries it (a manual correction's change)
        unlogged = set(UNLOGGED_JSON) - {"evidence"}
        assert named == {k for k in changed[c["id"]] if k not in unlogged}, c["id"]
        for name, values in c["fields"].items():
            key, _, sub = name.partition(".")
            old, new = before[c["id"]].get(key), after[c["id"]].get(key)
            if sub:
                old, new = (old or {}).get(sub), (new or {}).get(sub)
            elif key in ("searchTerms", "suppressedHashes"):
                old, new = old or [], new or []
            assert values == {"before": old, "after": new}
    code, piped, err = run(capsys, *argv)  # not a terminal: one tab-separated line each
    assert code == 0
    lines = piped.splitlines()
    assert len(lines) == len(d["added"]) + len(d["changed"])
    assert all(line.split("\t")[0] in ("added", "changed") and line.count("\t") == 3
               for line in lines)  # fmt: skip
    assert err == f"{len(d['added'])} added, {len(d['changed'])} changed, 0 removed\n"


def test_diff_given_later_first_is_the_change_from_the_first_moment_to_the_second(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "diff", "2026-09-01", "2026-06-01", "--db", str(realistic),
                         "--json")  # fmt: skip
    assert code == 0, err
    back = json.loads(out)
    code, out, err = run(capsys, "diff", "2026-06-01", "2026-09-01", "--db", str(realistic),
                         "--json")  # fmt: skip
    forward = json.loads(out)
    assert (back["from"], back["to"]) == ("2026-09-01T00:00:00.000Z", "2026-06-01T00:00:00.000Z")
    assert back["removed"] == forward["added"] and back["added"] == forward["removed"] == []
    assert {c["id"] for c in back["changed"]} == {c["id"] for c in forward["changed"]}
    flip = {c["id"]: c["fields"] for c in forward["changed"]}
    for c in back["changed"]:
        for name, v in c["fields"].items():
            assert flip[c["id"]][name] == {"before": v["after"], "after": v["before"]}


def test_diff_names_a_manual_correction_s_evidence_change(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "diff", "2026-06-15", "2026-07-15", "--db", str(realistic),
                         "--json")  # fmt: skip
    assert code == 0, err
    fields = next(c["fields"] for c in json.loads(out)["changed"] if c["id"].startswith("81319653"))
    assert fields["evidence"]["after"]["basis"] == "manual_correction"
    assert fields["evidence"]["before"] != fields["evidence"]["after"]


def test_show_as_of_says_which_fields_the_log_cannot_give(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["show", "a100f0dec266627497b0e637", "--db", str(realistic), "--as-of", "2026-06-01"]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    labelled = [
        line.split(":")[0].strip() for line in out.splitlines() if "not in the event log" in line
    ]
    assert labelled == ["confirmed", "evidence", "evidence from"]
    code, out, _ = run(capsys, *argv, "--json")
    assert json.loads(out)["asOf"] == {
        "at": "2026-06-01T00:00:00.000Z",
        "notInEventLog": ["sourceEntryId", "evidence", "reinforcedAt"],
    }
    code, out, _ = run(capsys, *argv[:4])  # now: no label
    assert "not in the event log" not in out and "asOf" not in out


async def test_the_time_dial_to_a_past_moment_shows_the_records_as_they_were(
    realistic: Path,
) -> None:
    """``t`` with a past date turns the dial by the same replay as ``--as-of``: the list
    shows exactly the records that existed then, as they were; writes stay off; ``0``
    brings back every record as it is now."""
    truth = replayed_forward(realistic, parse_ms("2025-06-01T00:00:00.000Z") or 0)
    app = make_app(realistic)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await pilot.press("a")  # forgotten and conflicted shown too
        await pilot.press("t", *"2025-06-01", "enter")
        await until(pilot, lambda: app.state.past is not None, "the past")
        await settle(pilot)
        shown = {r.id: r for r in memory_list(app).rows if isinstance(r, Memory)}
        assert set(shown) == set(truth)
        for record_id, record in shown.items():
            assert record.content == truth[record_id]["content"]
            assert record.status == truth[record_id]["status"]
            assert record.revision == truth[record_id]["revision"]
        notices = [n.message for n in notifications(app)]
        assert any("replayed from the event log (62 records then)" in n for n in notices)
        status = str(app.screen.query_one("#status-line").render())
        assert "as of 2025-06-01 00:00 (from the event log; 0: now)" in status
        before = event_count(realistic)
        await press(pilot, "p")  # a write key writes nothing, and says why
        assert event_count(realistic) == before
        assert "time dial" in notifications(app)[-1].message
        await press(pilot, "0")
        assert app.state.as_of is None and app.state.past is None
        await until(pilot, lambda: len(memory_list(app).rows) == 205, "every record, as now")


async def test_the_time_dial_stops_where_the_log_stops_being_exact(realistic: Path) -> None:
    history = sorted(events(realistic))
    rowid, event = next((r, e) for r, e in history[120:] if e["after"])
    tamper(realistic, rowid, wrong_after)
    app = make_app(realistic)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await pilot.press("t", *"2024-12-01", "enter")
        await until(pilot, lambda: app.state.past is not None, "the dial")
        await settle(pilot)
        [warning] = [n for n in notifications(app) if n.severity == "warning"]
        assert f"exact back to {event['at']}; older changes unreadable" in warning.message
        assert app.state.as_of == parse_ms(event["at"])  # as far back as it is exact
        assert app.is_running


async def test_retimed_is_replace_of_the_quality_time(realistic: Path) -> None:
    store = await MemoryStore.open(realistic, read_only=True, clock=fixed_clock(FIXTURE_NOW))
    try:
        listed = (await store.load_memories()).memories
        stored = (await store.load_stored()).memories
    finally:
        await store.close()
    for record in (*listed[:20], *stored[:20]):
        again = retimed(record, 1.5e12)
        assert type(again) is type(record)
        assert values([again]) == values([replace(record, quality_at=1.5e12)])


async def test_the_timeline_counts_each_week_s_records_as_they_were(realistic: Path) -> None:
    """Per week over the last year: the records' states as the forward replay gives
    them, with their quality taken that week; and the events per day by actor."""
    store = await MemoryStore.open(realistic, read_only=True, clock=fixed_clock(FIXTURE_NOW))
    try:
        load = await store.load_memories()
        rows: list[Memory | CorruptRow] = [*load.corrupt, *load.memories]
        top = await store.last_event_rowid()
        now = parse_ms(FIXTURE_NOW) or 0
        moments = weeks(now, 52)
        counted = await standing(PastLog(store), rows, top, moments)
        days = await activity(store, now - 365 * DAY_MS, now)
    finally:
        await store.close()
    assert [s.at for s in counted] == moments and all(s.exact for s in counted)
    for s in counted[::5]:
        truth = replayed_forward(realistic, s.at)
        expected = Counter(listed_from_data(r, s.at).state for r in truth.values())
        assert s.counts == dict(expected), iso(s.at)
    by_day: dict[int, Counter[str]] = {}
    for _, e in events(realistic):
        at = parse_ms(e["at"]) or 0
        if now - 365 * DAY_MS <= at <= now:
            by_day.setdefault(int(at // DAY_MS), Counter())[e["actor"]] += 1
    assert days == by_day and sum(sum(c.values()) for c in days.values()) > 50


async def test_the_dial_undoes_this_dashboard_s_own_write_with_live_updates_paused(
    realistic: Path,
) -> None:
    """A write of ours, made while live updates are paused, is in the rows at once but
    its event was not read yet: the past must still undo it (and not call the log
    inexact because the rows and the events it has read disagree)."""
    record = "359cfc5bb42243f25a16b237"  # unpinned, and so it was on 2026-10-01
    when = parse_ms("2026-10-01T00:00:00.000Z") or 0
    truth = replayed_forward(realistic, when)
    assert truth[record]["layer"] != "pinned"
    app = make_app(realistic)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await press(pilot, "ctrl+space")
        assert not app.state.live
        await select(pilot, record)
        await press(pilot, "p")
        found = app.state.find(record)
        assert isinstance(found, Memory) and found.pinned
        await pilot.press("t", *"2026-10-01", "enter")
        await until(pilot, lambda: app.state.past is not None, "the past")
        await settle(pilot)
        assert not [n for n in notifications(app) if n.severity == "warning"]
        then = app.state.find(record)
        assert isinstance(then, Memory) and not then.pinned
        assert {r.id for r in app.state.rows if isinstance(r, Memory)} == set(truth)


# --- the past on a damaged log (never a wrong answer given as exact) ----------------


def test_a_damaged_log_refuses_every_older_moment_even_with_the_clock_moved_there(
    hostile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """hostile.sqlite's newest event is not JSON: nothing before now is known. The CLI
    moves its clock to the moment asked for; the limit must not follow it."""
    for argv in (["list"], ["list", "--all"], ["show", "raw-escape-0001"],
                 ["status"], ["search", "memory"]):  # fmt: skip
        code, out, err = run(capsys, *argv, "--db", str(hostile), "--as-of", "2026-09-22")
        assert (code, out) == (2, ""), argv
        assert err.count("\n") == 1, err
        assert "exact only as it is now; older changes unreadable (event corrupt-event-0001" in err
    code, out, _ = run(capsys, "list", "--json", "--db", str(hostile), "--as-of", "2026-09-22")
    assert code == 2 and "exact only as it is now" in json.loads(out)["error"]


def drop_events_of(path: Path, record_id: str) -> None:
    con = sqlite3.connect(path)
    try:
        con.execute(
            "DELETE FROM events WHERE rowid IN (SELECT e.rowid FROM events e, "
            "json_each(e.data, '$.after') j WHERE json_extract(j.value, '$.id') = ?)",
            (record_id,),
        )
        con.commit()
    finally:
        con.close()


def test_a_record_no_event_names_exists_from_its_created_at(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = events(realistic)
    counts = Counter(a["id"] for _, e in history for a in e["after"])
    # a record written by one event only, which names nothing else
    record_id, created = next(
        (e["after"][0]["id"], e["after"][0]["createdAt"])
        for _, e in sorted(history)[60:]
        if len(e["after"]) == 1 and counts[e["after"][0]["id"]] == 1
    )
    drop_events_of(realistic, record_id)
    when = parse_ms(created) or 0
    for moment, there in ((when - DAY_MS, False), (when + DAY_MS, True)):
        code, out, err = run(capsys, "list", "--db", str(realistic), "--as-of", iso(moment),
                             "--all", "--json")  # fmt: skip
        assert code == 0, err
        assert (record_id in {i["memory"]["id"] for i in json.loads(out)}) is there
    code, out, _ = run(capsys, "show", record_id, "--db", str(realistic))
    assert "history: not in the event log" in out


def test_an_event_dated_before_one_written_earlier_is_taken_after_it(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A clock set back: event 144 (2026-08-29) dated 2026-03-01. The log is append-only,
    so it happened after event 143: the store at 2026-08-01 is as it truly was."""
    truth = replayed_forward(realistic, parse_ms("2026-08-01T00:00:00.000Z") or 0)
    _, true_diff, _ = run(capsys, "diff", "2026-08-01", "--db", str(realistic), "--json")

    def set_back(raw: str) -> str:
        data = json.loads(raw)
        data["at"] = "2026-03-01T00:00:00.000Z"
        return json.dumps(data)

    tamper(realistic, 144, set_back)
    record = "359cfc5bb42243f25a16b237"
    code, out, err = run(capsys, "show", record, "--db", str(realistic), "--as-of", "2026-08-01",
                         "--json")  # fmt: skip
    assert code == 0, err
    shown = json.loads(out)["memory"]
    assert shown["revision"] == truth[record]["revision"] == 1
    assert shown["updatedAt"] == truth[record]["updatedAt"]
    code, out, err = run(capsys, "diff", "2026-08-01", "--db", str(realistic), "--json")
    d = json.loads(out)
    assert code == 0 and d == json.loads(true_diff)
    assert (len(d["added"]), len(d["changed"])) == (82, 12)


def test_an_event_dated_forward_moves_itself_not_every_event_after_it(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One event re-dated to 2031: the store at 2026-10-31 and the diff from 2026-05-25
    are still the truth (the event is taken between its neighbours), and the verb says
    that the log's dates were out of order."""
    when = parse_ms("2026-10-31T00:00:00.000Z") or 0
    truth = replayed_forward(realistic, when)
    _, true_diff, _ = run(capsys, "diff", "2026-05-25", "2026-10-31", "--db", str(realistic),
                          "--json")  # fmt: skip

    def forward(raw: str) -> str:
        data = json.loads(raw)
        data["at"] = "2031-01-01T00:00:00.000Z"
        return json.dumps(data)

    tamper(realistic, 144, forward)
    code, out, err = run(capsys, "list", "--db", str(realistic), "--as-of", "2026-10-31",
                         "--all", "--json")  # fmt: skip
    assert code == 0, err
    assert {i["memory"]["id"] for i in json.loads(out)} == set(truth)
    assert "1 event(s) of pi's log are dated out of the order they were written" in err
    code, out, err = run(capsys, "diff", "2026-05-25", "2026-10-31", "--db", str(realistic),
                         "--json")  # fmt: skip
    assert code == 0 and json.loads(out) == json.loads(true_diff)
    assert "out of the order they were written" in err


async def test_two_replays_at_once_share_the_walk_without_seeing_damage(realistic: Path) -> None:
    """The dial and the last visit's diff walk one PastLog at the same time: each gets the
    same answer as a walk of its own."""
    import asyncio

    store = await MemoryStore.open(realistic, read_only=True, clock=fixed_clock(FIXTURE_NOW))
    try:
        load = await store.load_memories()
        rows: list[Memory | CorruptRow] = [*load.corrupt, *load.memories]
        top = await store.last_event_rowid()
        moments = [
            parse_ms(m) or 0 for m in ("2025-01-01", "2026-06-01", "2024-09-15", "2026-10-01")
        ]
        shared = PastLog(store, checkpoint_every=5)
        together = await asyncio.gather(*(shared.at(m, rows, top) for m in moments))
        for when, past in zip(moments, together, strict=True):
            alone = await PastLog(store).at(when, rows, top)
            assert not past.clamped, past.limit_line()
            assert values(past.rows) == values(alone.rows)
    finally:
        await store.close()


def test_status_as_of_counts_the_model_calls_of_then_and_marks_the_queue_as_now(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "status", "--db", str(realistic), "--as-of", "2026-10-15")
    assert code == 0, err
    assert "Shared calls/hour=0/20; last24h=0;" in out  # every call was made after then
    assert "(as now); SQLite ok" in out.splitlines()[0]
    code, out, _ = run(capsys, "status", "--db", str(realistic))
    assert "Shared calls/hour=3/20; last24h=31;" in out and "(as now)" not in out


@pytest.mark.parametrize(
    "offset", ["+9999999d", "-999999999999999999999d", "+9999999999999999999999999999999y"]
)
def test_an_out_of_range_moment_is_one_line(
    realistic: Path, capsys: pytest.CaptureFixture[str], offset: str
) -> None:
    for argv in (["list", "--as-of", offset], ["show", "a100f0dec266627497b0e637", "--as-of",
                 offset], ["diff", offset]):  # fmt: skip
        code, out, err = run(capsys, *argv, "--db", str(realistic))
        assert (code, out) == (2, ""), (argv, err)
        assert err.count("\n") == 1 and "out of range" in err and "Traceback" not in err


async def test_the_dial_and_the_diff_refuse_an_out_of_range_moment_and_live_on(
    realistic: Path,
) -> None:
    app = make_app(realistic)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await pilot.press("t", *"+9999999d", "enter")
        await until(pilot, lambda: any("out of range" in n.message for n in notifications(app)),
                    "the dial's refusal")  # fmt: skip
        await pilot.press("D", *"-99999999999999d", "enter")
        await until(pilot, lambda: sum("out of range" in n.message for n in notifications(app))
                    == 2, "the diff's refusal")  # fmt: skip
        assert app.is_running and app.state.as_of is None


async def test_the_dials_status_line_counts_the_records_then_as_its_toast_does(
    realistic: Path,
) -> None:
    """At a past moment the list says "N shown of M" with M the records then (the
    toast's count), not the records now."""
    async with opened(realistic) as (app, pilot):
        await pilot.press("t", *"2026-06-01", "enter")
        await until(pilot, lambda: app.state.as_of is not None, "the dial")
        await settle(pilot)
        then = len(app.state.rows)
        assert 0 < then < 205
        line = str(app.screen.query_one("#status-line").render())
        assert f"shown of {then} " in line, line
