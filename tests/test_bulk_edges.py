"""Bulk actions at the edges: one cut short by a kill, marks made while pi writes, and
the app's own state directory when it is hostile or unusable."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from ptyrun import PtyRun

from memevo_tui.core.appstate import MAX_BYTES, AppState, Visit
from memevo_tui.dialogs.confirm import ConfirmScreen
from memevo_tui.term.compat.testing import notifications
from memevo_tui.views.memories import MemoriesView
from memevo_tui.widgets.event_list import BatchRow, EventList
from memevo_tui.widgets.memory_list import MemoryList
from store import Memory, MemoryStore, fixed_clock
from store.learning.learning import ClaimIn, Learning

from apphelpers import (
    dialog_text,
    event_count,
    make_app,
    opened,
    press,
    select,
    settle,
    stored,
    until,
    wait_loaded,
    words,
)
from conftest import FIXTURE_NOW, ROOT


def memories(app: Any) -> MemoryList:
    found: MemoryList = app.query_one("#memory-list", MemoryList)
    return found


def toasts(app: Any) -> list[str]:
    return [f"{n.title}: {n.message}" for n in notifications(app)]


def manual_events_after(path: Path, rowid: int) -> list[tuple[int, dict[str, Any]]]:
    con = sqlite3.connect(path)
    rows = con.execute(
        "SELECT rowid, data FROM events WHERE rowid > ? ORDER BY rowid", (rowid,)
    ).fetchall()
    con.close()
    return [(r, json.loads(d)) for r, d in rows if json.loads(d)["actor"] == "manual"]


def last_rowid(path: Path) -> int:
    con = sqlite3.connect(path)
    (n,) = con.execute("SELECT coalesce(max(rowid), 0) FROM events").fetchone()
    con.close()
    return int(n)


# ---------------------------------------------------------------- #4: cut short

KILLED_MIDWAY = """
import asyncio, os, signal, sys
from pathlib import Path
from memevo_tui.core.appstate import AppState
from store import MemoryStore, fixed_clock

async def main(path: str, targets: list[str]) -> None:
    clock = fixed_clock("2026-11-01T12:00:00.000Z")
    async with await MemoryStore.open(path, clock=clock) as store:
        after = await store.last_event_rowid()
        AppState(Path(path)).begin_batch("forget", "forget", "2026-11-01T12:00:00.000Z",
                                         targets, after)
        for memory_id in targets[:3]:
            await store.forget(memory_id)
        os.kill(os.getpid(), signal.SIGKILL)  # the machine went down after three of five

asyncio.run(main(sys.argv[1], sys.argv[2:]))
"""


async def forgettable(path: Path, count: int) -> list[str]:
    async with await MemoryStore.open(path, clock=fixed_clock(FIXTURE_NOW)) as store:
        load = await store.load_memories()
    rows = [r for r in load.memories if isinstance(r, Memory) and r.status == "confirmed"]
    return [r.id for r in rows if r.layer == "durable"][:count]


async def test_a_bulk_forget_cut_short_is_undone_by_one_u(realistic: Path) -> None:
    targets = await forgettable(realistic, 5)
    assert len(targets) == 5
    before = last_rowid(realistic)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_MIDWAY, str(realistic), *targets], cwd=ROOT, check=False
    )
    assert killed.returncode == -signal.SIGKILL
    written = manual_events_after(realistic, before)
    assert [e["reason"] for _, e in written] == ["forget"] * 3
    assert AppState(realistic).pending(), "the batch was journaled before its first write"

    app = make_app(realistic)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await until(pilot, lambda: any("cut short" in t for t in toasts(app)), "the notice")
        notice = next(t for t in toasts(app) if "cut short" in t)
        assert "A bulk forget of 5 records" in notice and "3 written" in notice
        assert not AppState(realistic).pending()  # reconciled, once
        (batch,) = AppState(realistic).batches()
        assert batch.cut_short and batch.planned == 5
        assert list(batch.events) == [e["id"] for _, e in written]

        await press(pilot, "h")
        history = app.query_one(EventList)
        first = history.rows[0]
        assert isinstance(first, BatchRow) and len(first.events) == 3  # one entry
        assert "cut short at 3 of 5" in history.cells(first)["text"]
        count = event_count(realistic)
        await press(pilot, "u")
        assert isinstance(app.screen, ConfirmScreen)
        assert "cut short" in app.screen.title_text and "the 3 of 5" in app.screen.title_text
        await press(pilot, "y")
        assert event_count(realistic) == count + 3  # one u: all three undone
    for memory_id in targets:
        assert stored(realistic, memory_id)["status"] == "confirmed"


KEYS_THEN_WATCH = 0.02
"""How often the kill test looks at the events table (it kills at the first forget)."""


def test_kill_9_during_a_bulk_forget_leaves_it_one_batch(tmp_path: Path) -> None:
    """The real dashboard, killed as soon as its first forget commits: whatever it wrote
    by then (one event or all of them) is undone from one history entry."""
    from conftest import copy_fixture

    db = copy_fixture("realistic.sqlite", tmp_path)
    env = {"MEMEVO_NOW": FIXTURE_NOW, "XDG_STATE_HOME": str(tmp_path / "state")}
    before = last_rowid(db)
    run = PtyRun("--db", str(db), env=env, size=(160, 50))
    try:
        assert run.read_until(b"shown of"), run.text[-2000:]
        run.send(b"/is:unpinned\r")
        run.pump(1.0)
        run.send(b"\x01")  # ctrl+a: mark every record the filter shows
        assert run.read_until(b"marked"), run.text[-2000:]
        run.send(b"d")
        assert run.read_until(b"Write"), run.text[-2000:]
        run.send(b"y")
        deadline = time.monotonic() + 60
        while not manual_events_after(db, before):
            assert time.monotonic() < deadline, "no forget was written"
            run.pump(KEYS_THEN_WATCH)
        run.proc.kill()  # kill -9 at the first commit
        run.proc.wait()
    finally:
        if run.proc.poll() is None:
            run.proc.kill()
            run.proc.wait()
        os.close(run.master)
    written = [e["id"] for _, e in manual_events_after(db, before)]
    assert written and all(e["reason"] == "forget" for _, e in manual_events_after(db, before))
    state = AppState(db, tmp_path / "state")
    assert len(state.pending()) == 1  # journaled before the first write
    (pending,) = state.pending()
    assert len(written) <= len(pending.targets)
    print(f"killed after {len(written)} of {len(pending.targets)} forgets")

    async def reopen() -> None:
        async with opened(db) as (_app, pilot):
            await until(pilot, lambda: not state.pending(), "the journal reconciled")
            if len(written) >= 2:
                (batch,) = state.batches()
                assert list(batch.events) == written
                assert batch.cut_short == (len(written) < len(pending.targets))

    asyncio.run(reopen())


# ---------------------------------------------------------------- #6: marks while pi writes


async def learn_one(store: MemoryStore, n: int) -> str:
    """What pi does when it learns a memory: a source, a run, a claim. Its id."""
    learning = Learning(store)
    sid = f"compact:00000000-0000-4000-8000-{n:012d}:{n:08x}"
    await learning.capture(
        {
            "id": sid,
            "scope": "global",
            "kind": "summary",
            "content": f"The arrival number {n} uses port {4000 + n}.",
            "createdAt": "2026-11-01T12:00:00.000Z",
        }
    )
    run = await learning.begin(sid, model="anthropic/claude-sonnet-4-5", reserved_usd=0.2)
    assert run is not None
    before = {r.id for r in (await store.load_memories()).memories}
    await learning.finish(
        run,
        [ClaimIn("fact", f"The arrival number {n} uses port {4000 + n}.")],
        model="anthropic/claude-sonnet-4-5",
        diagnostic={"protocol": 2, "model": "anthropic/claude-sonnet-4-5", "outputBytes": 120},
        charged_usd=0.01,
        input_tokens=2000,
        output_tokens=100,
    )
    (new,) = {r.id for r in (await store.load_memories()).memories} - before
    return new


async def test_a_range_marks_what_the_cursor_passed_while_pi_writes(realistic: Path) -> None:
    app = make_app(realistic)
    clock = fixed_clock("2026-11-01T12:05:00.000Z")
    async with (
        app.run_test(size=(160, 24)) as pilot,
        await MemoryStore.open(realistic, clock=clock) as pi,
    ):
        await wait_loaded(pilot)
        shown = [r.id for r in memories(app).rows if isinstance(r, Memory)]
        assert len(shown) > 60
        arrived = []
        await pilot.press("v")
        passed = memories(app).size.height + 3  # past the rows first shown
        assert passed < 25
        for n in range(passed):
            await pilot.press("j")
            arrived.append(await learn_one(pi, n))  # pi learns one between two key presses
            await until(pilot, lambda: app.state.find(arrived[-1]) is not None, "the arrival")
            await settle(pilot)
        await press(pilot, "v")
        view = app.screen.query_one(MemoriesView)
        assert set(view.marks) == set(shown[: passed + 1])  # exactly what the cursor passed
        assert not set(view.marks) & set(arrived)
        await press(pilot, "d")
        assert isinstance(app.screen, ConfirmScreen)
        preview = words(dialog_text(app.screen))
        assert f"{passed + 1} will be written" in preview
        assert f"{passed} record(s) arrived since marking began; none of them marked" in preview
        await pilot.press("escape")


async def test_moving_back_over_a_range_shrinks_it(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        shown = [r.id for r in memories(app).rows if isinstance(r, Memory)]
        await pilot.press("v", *"jjjjj", *"kk", "v")
        await settle(pilot)
        view = app.screen.query_one(MemoriesView)
        assert set(view.marks) == set(shown[:4])


# ---------------------------------------------------------------- #5: the state directory


async def test_a_symlinked_state_directory_is_never_followed(
    realistic: Path, tmp_path: Path
) -> None:
    target = tmp_path / "etc"
    target.mkdir()
    state = AppState(realistic)
    state.dir.parent.mkdir(parents=True)
    state.dir.symlink_to(target)
    app = make_app(realistic)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await until(pilot, lambda: any("are off" in t for t in toasts(app)), "the warning")
        (warning,) = [t for t in toasts(app) if "are off" in t]
        assert "Batch undo and the last visit are off" in warning
        assert "is a symbolic link" in warning
        await pilot.press("space", "j", "space", "p")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        preview = words(dialog_text(app.screen))
        assert "undone record by record" in preview
        assert "one undo in the history" not in preview
        await press(pilot, "y")
        await pilot.press("q")
    assert list(target.iterdir()) == []  # nothing written through the link
    assert [t for t in toasts(app) if "are off" in t] == [warning]  # said once


async def test_a_state_home_that_is_a_file_warns_once_and_the_app_works(
    realistic: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "state-file"
    home.write_text("not a directory\n")
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    app = make_app(realistic)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await until(pilot, lambda: any("are off" in t for t in toasts(app)), "the warning")
        assert any("is not a directory" in t for t in toasts(app))
        before = event_count(realistic)
        await pilot.press("space", "j", "space", "p")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "undone record by record" in words(dialog_text(app.screen))
        await press(pilot, "y")
        assert event_count(realistic) == before + 2  # the writes themselves go ahead
    assert home.read_text() == "not a directory\n"
    assert sum("are off" in t for t in toasts(app)) == 1


def test_state_directories_are_made_0700_and_narrowed(realistic: Path, tmp_path: Path) -> None:
    root = tmp_path / "s"
    state = AppState(realistic, root)
    assert state.save_visit(Visit(1, 2.0))
    for path in [root / "memevo-tui", root / "memevo-tui" / "stores", state.dir]:
        assert path.stat().st_mode & 0o777 == 0o700
    assert (state.dir / "visit.json").stat().st_mode & 0o777 == 0o600
    state.dir.chmod(0o755)
    assert state.check() is None and state.dir.stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in state.dir.iterdir()) == [".lock", "visit.json"]  # no temporary


def test_state_files_that_are_links_or_fifos_are_not_followed(
    realistic: Path, tmp_path: Path
) -> None:
    state = AppState(realistic, tmp_path / "s")
    assert state.check() is None
    secret = tmp_path / "secret.json"
    secret.write_text('{"rowid": 7, "atMs": 1}\n')
    (state.dir / "visit.json").symlink_to(secret)
    os.mkfifo(state.dir / "batches.jsonl")  # reading a fifo would block for ever
    assert state.visit() is None  # the link is not read through
    assert state.batches() == [] and state.pending() == []
    assert state.save_visit(Visit(9, 1.0))
    assert secret.read_text() == '{"rowid": 7, "atMs": 1}\n'  # the link itself was replaced
    assert not (state.dir / "visit.json").is_symlink()
    assert state.visit() == Visit(9, 1.0)


def test_garbage_huge_lines_and_wrong_types_in_state_files_are_tolerated(
    realistic: Path, tmp_path: Path
) -> None:
    state = AppState(realistic, tmp_path / "s")
    assert state.check() is None
    good = {"id": "b1", "verb": "pin", "at": "2026-11-01T12:00:00.000Z", "events": ["e1", "e2"]}
    lines = [
        "garbage {",
        "[1, 2, 3]",
        "null",
        json.dumps({"id": "b2", "verb": "pin", "at": "x", "events": "e1"}),
        json.dumps({"state": "begun", "id": "p1", "verb": "pin"}),
        json.dumps(
            {
                "state": "begun",
                **{k: [] for k in ("id", "verb", "op", "at")},
                "afterRowid": "1e400",
                "targets": 3,
                "pid": None,
                "host": 1,
            }
        ),
        "[" * 100_000 + "]" * 100_000,
        "\udcff".encode("utf-8", "surrogatepass").decode("utf-8", "replace"),
        json.dumps(good),
    ]
    (state.dir / "batches.jsonl").write_text("\n".join(lines) + "\n")
    (state.dir / "visit.json").write_text('{"rowid": "many", "atMs": [1]}')
    (state.dir / "review.json").write_text('{"kept": {"a": 1}}')
    assert [b.id for b in state.batches()] == ["b1"]
    assert state.pending() == []
    assert state.visit() is None and state.kept() == set()
    assert state.keep("k1") and state.kept() == {"k1"}

    # a journal bigger than is ever read: its newest part counts, its cut line does not
    with (state.dir / "batches.jsonl").open("w") as f:
        f.write(json.dumps({**good, "id": "old"}) + "\n")
        f.write("x" * (MAX_BYTES + 10) + "\n")
        f.write(json.dumps({**good, "id": "new"}) + "\n")
    assert [b.id for b in state.batches()] == ["new"]


def test_begin_and_finish_keep_other_entries_and_drop_a_one_event_batch(
    realistic: Path, tmp_path: Path
) -> None:
    state = AppState(realistic, tmp_path / "s")
    first = state.begin_batch("pin", "pin", "2026-11-01T12:00:00.000Z", ["a", "b"], 10)
    second = state.begin_batch("forget", "forget", "2026-11-01T12:01:00.000Z", ["c", "d"], 12)
    assert first and second
    assert state.pending() == []  # this process is running them
    done = state.finish_batch(first, ["e1", "e2"])
    assert done is not None and done.planned == 2 and not done.cut_short
    assert state.finish_batch(second, ["e3"]) is None  # one event: nothing to group
    assert [b.id for b in state.batches()] == [first]
    text = (state.dir / "batches.jsonl").read_text()
    assert text.count("\n") == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_a_state_directory_owned_by_another_user_is_refused(
    realistic: Path, tmp_path: Path
) -> None:
    state = AppState(realistic, tmp_path / "s")
    assert state.check() is None
    os.chown(state.dir, 65534, 65534)
    assert not state.save_visit(Visit(1, 2.0))
    assert state.problem is not None and "belongs to another user (uid 65534)" in state.problem
    assert list(state.dir.iterdir()) == []


# ---------------------------------------------------------------- previews that say what is so


async def test_a_refused_undo_in_a_batch_shows_the_records_text(realistic: Path) -> None:
    from test_many import change_elsewhere, mark_three

    async with opened(realistic) as (app, pilot):
        ids = await mark_three(pilot)
        texts = {r.id: r.content for r in memories(app).rows if isinstance(r, Memory)}
        await pilot.press("p", "y")
        await settle(pilot)
        pins = [e for _, e in manual_events_after(realistic, 0)][-3:]
        await asyncio.to_thread(change_elsewhere, realistic, ids[1])
        await press(pilot, "h")
        history = app.query_one(EventList)
        history.cursor = next(n for n, r in enumerate(history.rows) if isinstance(r, BatchRow))
        await settle(pilot)
        await press(pilot, "u")
        assert isinstance(app.screen, ConfirmScreen)
        preview = words(dialog_text(app.screen))
        refused_pin = next(e for e in pins if e["after"][0]["id"] == ids[1])
        assert f"refused {texts[ids[1]][:40]}" in preview  # the record, by its text
        assert refused_pin["id"] not in preview  # not the event's id in its place
        await pilot.press("escape")


async def test_a_bulk_pin_says_which_records_it_leaves_as_they_are(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        rows = [r for r in memories(app).rows if isinstance(r, Memory) and r.active]
        pinned = [r for r in rows if r.pinned][:2]
        loose = [r for r in rows if not r.pinned][:2]
        assert len(pinned) == 2 and len(loose) == 2
        for r in (*pinned, *loose):
            memories(app).cursor = memories(app).rows.index(r)
            await settle(pilot)
            await pilot.press("space")
        before = event_count(realistic)
        await press(pilot, "p")
        assert isinstance(app.screen, ConfirmScreen)
        preview = words(dialog_text(app.screen))
        assert "2 will be written" in preview and "2 unchanged" in preview
        assert "2 already pinned: left as they are." in preview
        await press(pilot, "y")
        assert event_count(realistic) == before + 2  # only what changes is written


async def test_an_undo_says_it_blocks_the_text_and_names_the_record(realistic: Path) -> None:
    """pi's undo blocks each undone text in its origin, even a pin's (§4.9): the single
    undo names the record and its text; the batch's says how many texts, and where."""
    from test_many import mark_three

    async with opened(realistic) as (app, pilot):
        ids = await mark_three(pilot)
        texts = {r.id: r.content for r in memories(app).rows if isinstance(r, Memory)}
        await pilot.press("p", "y")
        await settle(pilot)
        await press(pilot, "h")
        history = app.query_one(EventList)
        history.cursor = next(n for n, r in enumerate(history.rows) if isinstance(r, BatchRow))
        await settle(pilot)
        await press(pilot, "u")
        assert isinstance(app.screen, ConfirmScreen)
        preview = words(dialog_text(app.screen))
        assert "pi will also never learn these 3 texts again in" in preview
        await pilot.press("escape")
        await press(pilot, "m", "escape")
        await select(pilot, ids[0])
        await press(pilot, "u")  # its last event is the bulk action's: undone whole
        assert isinstance(app.screen, ConfirmScreen)
        assert "Undo the pin of 3 records" in words(dialog_text(app.screen))
        await pilot.press("escape")
        one = next(i for i in texts if i not in ids and stored(realistic, i)["layer"] != "pinned")
        await select(pilot, one)
        await press(pilot, "p", "u")  # a record's own pin: the single undo
        assert isinstance(app.screen, ConfirmScreen)
        preview = words(dialog_text(app.screen))
        assert f"{one}: {words(texts[one])[:40]}" in preview
        assert "pi will also never learn this text again in /home/dev/projects/" in preview
        await pilot.press("escape")


async def test_undoing_a_pin_offers_unpin_first_which_blocks_nothing(realistic: Path) -> None:
    """pi's undo blocks the record's text even for a pin; unpinning gives the same layer
    back and blocks nothing, so the preview offers it first (i)."""
    from textual.widgets import Button

    from memevo_tui.dialogs.confirm import ConfirmScreen
    from memevo_tui.widgets.memory_list import MemoryList

    from apphelpers import dialog_text, press, stored, until

    async with opened(realistic) as (app, pilot):
        row = app.query_one(MemoryList).highlighted
        assert row is not None and stored(realistic, row.id)["layer"] != "pinned"
        before = blocked_count(realistic)
        await press(pilot, "p")
        assert stored(realistic, row.id)["layer"] == "pinned"
        await press(pilot, "u")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the undo preview")
        said = " ".join(dialog_text(app.screen).split())
        assert "Unpin instead (i): the same layer back, and nothing is blocked" in said
        assert str(app.screen.query_one("#instead", Button).label) == "Unpin instead (i)"
        await press(pilot, "i")
        await until(pilot, lambda: stored(realistic, row.id)["layer"] != "pinned", "the unpin")
        assert blocked_count(realistic) == before  # an undo would have blocked the text


async def test_undoing_a_bulk_pin_offers_to_unpin_them_all_first(realistic: Path) -> None:
    from test_many import mark_three

    async with opened(realistic) as (app, pilot):
        ids = await mark_three(pilot)
        await pilot.press("p", "y")
        await settle(pilot)
        assert all(stored(realistic, i)["layer"] == "pinned" for i in ids)
        before = blocked_count(realistic)
        await press(pilot, "h")
        history = app.query_one(EventList)
        history.cursor = next(n for n, r in enumerate(history.rows) if isinstance(r, BatchRow))
        await settle(pilot)
        await press(pilot, "u")
        assert isinstance(app.screen, ConfirmScreen)
        assert "Unpin the 3 instead (i)" in words(dialog_text(app.screen))
        await press(pilot, "i")
        await until(pilot, lambda: all(stored(realistic, i)["layer"] != "pinned" for i in ids),
                    "the three unpinned")  # fmt: skip
        assert blocked_count(realistic) == before


def blocked_count(path: Path) -> int:
    """Rows of pi's ``blocked`` table: texts it will never learn again."""
    con = sqlite3.connect(path)
    try:
        return int(con.execute("SELECT count(*) FROM blocked").fetchone()[0])
    finally:
        con.close()
