"""Merge: keep one record with a text the user edits, forget the others, as pi's own
``correct`` and ``forget`` writes journaled as one batch. Real keys, checked in the store,
and table for table against the same writes made directly."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from memevo_tui.core.bulk import merge_plan, merge_problem
from memevo_tui.dialogs.confirm import ConfirmScreen
from memevo_tui.dialogs.correct import CorrectScreen
from memevo_tui.widgets.event_list import BatchRow, EventList
from memevo_tui.widgets.review_list import ReviewList
from store import Memory, MemoryStore, fixed_clock

from apphelpers import (
    Notes,
    counter_ids,
    dialog_text,
    memory_list,
    opened,
    press,
    select,
    settle,
    stored,
    until,
    words,
)
from conftest import FIXTURE_NOW

SHORT = "e95e2126a08864e18d8594a1"  # "[done] Runbook for k3s node replacement merged"
LONG = "cf8f3f95303d31090296a36f"  # "... written and merged."
"""Review's near-duplicate pair of the realistic fixture (infra)."""


def tables(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, sorted: two stores equal here hold the same data."""
    con = sqlite3.connect(path)
    try:
        names = [n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {n: sorted(map(tuple, con.execute(f'SELECT * FROM "{n}"')), key=repr) for n in names}
    finally:
        con.close()


def records(path: Path, *ids: str) -> list[Memory]:
    async def read() -> list[Memory]:
        store = await MemoryStore.open(path, clock=fixed_clock(FIXTURE_NOW))
        try:
            return [m for m in await store.memories(list(ids)) if isinstance(m, Memory)]
        finally:
            await store.close()

    return asyncio.run(read())


def test_a_merge_corrects_the_record_kept_first_then_forgets_the_others(realistic: Path) -> None:
    short, long = records(realistic, SHORT, LONG)
    steps = merge_plan("merge", [short, long], long.content)
    assert [(s.op, s.memory_id) for s in steps] == [("correct", LONG), ("forget", SHORT)]
    assert steps[0].new_text == long.content and all(s.writes for s in steps)
    # the text of the shorter one: it is the record kept (a forget of it would take the
    # record corrected to its text too: pi forgets every same-text record of an origin)
    steps = merge_plan("merge", [long, short], short.content)
    assert [(s.op, s.memory_id) for s in steps] == [("correct", SHORT), ("forget", LONG)]
    # a text pi refuses: nothing is written, the others included
    steps = merge_plan("merge", [short, long], "no")
    assert steps[0].refusal == "Correction must be 4\u2013800 characters without credentials"
    assert not any(s.writes for s in steps)
    assert "cannot be corrected" in (steps[1].refusal or "")
    # changed since it was marked
    steps = merge_plan("merge", [short, long], long.content, {SHORT: short.revision - 1})
    assert "changed since you marked it" in (steps[1].refusal or "")


def test_a_merge_takes_two_records_or_more_of_one_origin(realistic: Path) -> None:
    short, long = records(realistic, SHORT, LONG)
    assert merge_problem([short, long]) is None
    assert "two or more" in (merge_problem([short]) or "")
    assert "two or more" in (merge_problem([short, short]) or "")
    from dataclasses import replace

    assert "one origin" in (merge_problem([short, replace(long, scope="/elsewhere")]) or "")


def test_a_same_text_twin_is_left_to_the_write_that_takes_it(realistic: Path) -> None:
    from dataclasses import replace

    short, long = records(realistic, SHORT, LONG)
    twin = replace(short, id="twin0000000000000000000a")
    steps = merge_plan("merge", [short, long, twin], long.content)
    assert [(s.op, s.memory_id, s.writes) for s in steps] == [
        ("correct", LONG, True),
        ("forget", SHORT, True),
        ("forget", twin.id, False),
    ]
    assert steps[2].unchanged == f"forgotten with {SHORT} (the same text)"


async def test_merge_from_a_review_pair_is_pis_correct_then_forget_in_one_batch(
    realistic: Path, tmp_path: Path
) -> None:
    direct = tmp_path / "direct.sqlite"
    shutil.copyfile(realistic, direct)
    text = "[done] Runbook for k3s node replacement written, reviewed and merged."
    async with opened(realistic) as (app, pilot):
        await press(pilot, "w")
        review = app.query_one(ReviewList)
        await until(pilot, lambda: bool(review.rows), "the review queue")
        review.cursor = next(
            n for n, item in enumerate(review.rows) if {m.id for m in item.records} == {SHORT, LONG}
        )
        await settle(pilot)
        await press(pilot, "M")
        assert isinstance(app.screen, CorrectScreen)  # prefilled with the longer text
        assert app.screen.query_one("#correct-text").text == stored(realistic, LONG)["content"]  # type: ignore[attr-defined]
        await pilot.press("f7", *text, "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the merge preview")
        preview = words(dialog_text(app.screen))
        assert f"Merge 2 records into {LONG}?" in preview
        assert "pi will also never learn these 2 texts again in /home/dev/projects/infra" in preview
        await press(pilot, "y")
        await until(pilot, lambda: stored(realistic, SHORT)["status"] == "forgotten", "the merge")
        kept = stored(realistic, LONG)
        assert kept["content"] == text and kept["status"] == "confirmed"
        await press(pilot, "h")
        history = app.query_one(EventList)
        await until(pilot, lambda: isinstance(history.rows[0], BatchRow), "the batch")
        batch = history.rows[0]
        assert isinstance(batch, BatchRow) and batch.batch.verb == "merge"
        assert len(batch.batch.events) == 2

    async def by_hand() -> None:  # what pi writes for the same two steps
        store = await MemoryStore.open(direct, clock=fixed_clock(FIXTURE_NOW), new_id=counter_ids())
        try:
            await store.correct(LONG, text)
            await store.forget(SHORT)
        finally:
            await store.close()

    await by_hand()
    assert tables(realistic) == tables(direct)


async def test_merge_of_marked_records_keeps_the_one_whose_text_is_chosen(
    realistic: Path,
) -> None:
    async with opened(realistic) as (app, pilot):
        short = stored(realistic, SHORT)["content"]
        for memory_id in (SHORT, LONG):
            await select(pilot, memory_id)
            await pilot.press("space")
        await settle(pilot)
        assert memory_list(app).marked == frozenset((SHORT, LONG))
        await press(pilot, "M")
        assert isinstance(app.screen, CorrectScreen)
        await pilot.press("f7", *short, "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the merge preview")
        assert f"Merge 2 records into {SHORT}?" in words(dialog_text(app.screen))
        await press(pilot, "y")
        await until(pilot, lambda: stored(realistic, LONG)["status"] == "forgotten", "the merge")
        assert stored(realistic, SHORT)["status"] == "confirmed"
        assert not memory_list(app).marked  # written: the marks have done their work


async def test_merge_on_one_record_says_what_it_takes_and_writes_nothing(realistic: Path) -> None:
    from apphelpers import event_count

    async with opened(realistic) as (app, pilot):
        notes = Notes(app)
        before = event_count(realistic)
        await select(pilot, SHORT)
        await press(pilot, "M")
        await until(pilot, lambda: "two or more" in notes.last(), "the refusal")
        assert not isinstance(app.screen, CorrectScreen)
        assert event_count(realistic) == before
