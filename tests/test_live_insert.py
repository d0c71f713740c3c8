"""A record another process adds (or one that leaves the filter) goes into the memory
list where a full sort would put it, without sorting the list again."""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.strip import Strip

from memevo_tui.core.view import SORTS, apply_view
from memevo_tui.widgets.memory_browser import MemoryBrowser
from memevo_tui.widgets.memory_list import MemoryList
from store import Memory, MemoryStore
from store.js import fp, js_json

from apphelpers import opened, settle, until

NEW_ID = "0a0a0a0a0a0a0a0a0a0a0a0a"


def add_elsewhere(path: Path, record_id: str, content: str, at: str) -> None:
    """Commit a new memory and its event, as pi's capture does, on its own connection."""
    con = sqlite3.connect(path, isolation_level=None)
    try:
        (data,) = con.execute("SELECT data FROM memories WHERE json_extract(data, '$.status') "
                              "= 'confirmed' LIMIT 1").fetchone()  # fmt: skip
        record = json.loads(data)
        record.update(id=record_id, content=content, createdAt=at, updatedAt=at)
        record.pop("reinforcedAt", None)
        record.pop("feedback", None)
        record.pop("pinned", None)
        event = {"id": "0b0b0b0b-0000-4000-8000-000000000001", "at": at, "actor": "local",
                 "reason": "Capture", "scope": record["scope"], "before": [None],
                 "after": [record]}  # fmt: skip
        con.execute("BEGIN IMMEDIATE")
        con.execute(
            "INSERT INTO memories VALUES (?,?,?,?)",
            (record_id, record["scope"], fp(content), js_json(record)),
        )
        con.execute(
            "INSERT INTO events VALUES (?,?,?)", (event["id"], record["scope"], js_json(event))
        )
        con.execute("COMMIT")
    finally:
        con.close()


def listed_in_full_sort(app: object) -> list[str]:
    browser = app.query_one(MemoryBrowser)  # type: ignore[attr-defined]
    rows, _ = apply_view(browser.state.rows, browser.view)
    return [r.id for r in rows]


def positions_agree(memory_list: MemoryList) -> bool:
    return all(memory_list.index_of(r.id) == i for i, r in enumerate(memory_list.rows))


async def test_a_new_memory_from_another_process_lands_in_sorted_place(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        memory_list = app.query_one("#memory-list", MemoryList)
        await pilot.press("j", "j", "j")
        await settle(pilot)
        highlighted = memory_list.highlighted
        assert highlighted is not None
        browser = app.query_one(MemoryBrowser)
        sorted_again: list[bool] = []
        full_sort = browser.apply

        def counted(**kw: Any) -> None:
            sorted_again.append(True)
            full_sort(**kw)

        browser.apply = counted  # type: ignore[method-assign]
        newest = max(r.updated_at for r in memory_list.rows if isinstance(r, Memory))
        add_elsewhere(realistic, NEW_ID, "A memory learned just now", newest[:-4] + "999Z")
        await until(pilot, lambda: memory_list.index_of(NEW_ID) is not None, "the new memory")
        await settle(pilot)
        ids = [r.id for r in memory_list.rows]
        assert ids == listed_in_full_sort(app)
        assert ids.index(NEW_ID) < ids.index(highlighted.id)  # the newest, above
        assert memory_list.highlighted is highlighted  # the cursor kept its record
        assert positions_agree(memory_list)
        assert not sorted_again  # placed by a binary search: the rest were not sorted again


async def test_a_new_memory_above_the_cursor_leaves_the_screen_as_it_was_and_is_counted(
    realistic: Path,
) -> None:
    """On the first row, a new memory sorted above it neither takes the highlight nor
    moves it down: the rows on screen hold still and the status line says "1 new
    above" until g goes to it."""
    async with opened(realistic) as (app, pilot):
        memory_list = app.query_one("#memory-list", MemoryList)
        assert memory_list.cursor == 0 and memory_list.scroll_y == 0
        first = memory_list.highlighted
        newest = max(r.updated_at for r in memory_list.rows if isinstance(r, Memory))
        add_elsewhere(realistic, NEW_ID, "A memory learned just now", newest[:-4] + "999Z")
        await until(pilot, lambda: memory_list.index_of(NEW_ID) == 0, "the new memory")
        await settle(pilot)
        assert memory_list.highlighted is first and memory_list.cursor == 1
        assert memory_list.scroll_y == 1  # the highlight stays on its screen line
        status = str(app.screen.query_one("#status-line").render())
        assert "1 new above (g: go to them)" in status
        await pilot.press("g")
        await settle(pilot)
        assert memory_list.cursor == 0 and memory_list.scroll_y == 0
        assert "new above" not in str(app.screen.query_one("#status-line").render())


@pytest.mark.parametrize("descending", [True, False])
async def test_records_arriving_and_leaving_keep_the_list_in_full_sort_order(
    realistic: Path, descending: bool
) -> None:
    """Under every sort: many new records (more than the moves ``index_of`` keeps
    track of) and records that stop matching, told as live changes; the list is what
    sorting everything again gives, and every row's position is known."""
    async with opened(realistic) as (app, pilot):
        browser = app.query_one(MemoryBrowser)
        memory_list = browser.memory_list
        rng = random.Random(7)
        templates = [r for r in app.state.rows if isinstance(r, Memory) and r.active]
        made = 0
        for sort in SORTS:
            browser.set_view(sort=sort, descending=descending)
            await settle(pilot)
            memory_list.cursor = len(memory_list.rows) // 2
            highlighted = memory_list.highlighted
            for _ in range(5):
                batch: list[Memory] = []
                for _ in range(rng.randint(1, 25)):
                    made += 1
                    like = rng.choice(templates)
                    batch.append(replace(like, id=f"{made:024x}", content=f"new {rng.random()}"))
                leaving = [
                    replace(r, status="forgotten")
                    for r in rng.sample(memory_list.rows, 3)
                    if isinstance(r, Memory) and r is not highlighted
                ]
                app.state.live_changed((), [*batch, *leaving], 0.0)
                await settle(pilot)
                assert [r.id for r in memory_list.rows] == listed_in_full_sort(app), sort
                assert positions_agree(memory_list), sort
            assert memory_list.highlighted is highlighted, sort


async def test_a_big_store_opens_at_the_top_of_its_list_after_the_first_screenful(
    realistic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big store shows its newest inserted rows first, then every row: the list
    opens at its own top, not wherever the first screenful's first record sorts."""
    import memevo_tui.core.state.reading as state_module

    con = sqlite3.connect(realistic)
    newest_inserted = con.execute("SELECT id FROM memories ORDER BY rowid DESC").fetchone()[0]
    # pi updates a row in place: the most recently updated is an old row, not in the
    # first screenful (the 20 newest inserted)
    latest = max(json.loads(d)["updatedAt"] for (d,) in con.execute("SELECT data FROM memories"))
    oldest_id, oldest = con.execute(
        "SELECT id, data FROM memories WHERE json_extract(data, '$.status') != 'forgotten' "
        "ORDER BY rowid LIMIT 1"
    ).fetchone()
    data = json.loads(oldest)
    data["updatedAt"] = latest[:-4] + "999Z"
    con.execute("UPDATE memories SET data = ? WHERE id = ?", (js_json(data), oldest_id))
    con.commit()
    con.close()
    monkeypatch.setattr(state_module, "FIRST_PAGE_THRESHOLD", 50)  # "big": over 50
    monkeypatch.setattr(state_module, "FIRST_PAGE", 20)
    pages: list[int] = []
    recent = MemoryStore.recent_memories

    async def counted(self: MemoryStore, limit: int) -> Any:
        pages.append(limit)
        return await recent(self, limit)

    monkeypatch.setattr(MemoryStore, "recent_memories", counted)
    async with opened(realistic) as (app, pilot):
        await settle(pilot)
        memory_list = app.query_one("#memory-list", MemoryList)
        ids = [r.id for r in memory_list.rows]
        assert ids == listed_in_full_sort(app)
        assert ids[0] == oldest_id and ids.index(newest_inserted) > 0
        assert memory_list.cursor == 0 and memory_list.scroll_y == 0
        assert memory_list.highlighted is memory_list.rows[0]
    assert pages == [20]  # a first screenful was shown before the rest


async def test_a_new_memory_above_a_scrolled_window_repaints_only_the_status_line(
    realistic: Path,
) -> None:
    """Issue 60: scrolled down the list, a new memory sorted above the window moves the
    window and the cursor down with the rows: every line on screen shows what it
    showed, the list draws no line again, and the status line counts it."""
    async with opened(realistic) as (app, pilot):
        memory_list = app.query_one("#memory-list", MemoryList)
        memory_list.focus()
        for _ in range(3):
            await pilot.press("pagedown")
        await settle(pilot)
        top, cursor = round(memory_list.scroll_y), memory_list.cursor
        assert 0 < top <= cursor
        height = memory_list.scrollable_content_region.height

        def lines() -> list[str]:
            return [memory_list.render_line(y).text for y in range(height)]

        before, first = lines(), memory_list.highlighted
        drawn: list[int] = []
        draw = memory_list.render_line

        def counted(y: int) -> Strip:
            drawn.append(y)
            return draw(y)

        memory_list.render_line = counted  # type: ignore[method-assign]
        newest = max(r.updated_at for r in memory_list.rows if isinstance(r, Memory))
        add_elsewhere(realistic, NEW_ID, "A memory learned just now", newest[:-4] + "999Z")
        await until(pilot, lambda: memory_list.index_of(NEW_ID) == 0, "the new memory")
        await settle(pilot)
        assert drawn == []  # no line of the list drawn again
        del memory_list.render_line
        assert memory_list.highlighted is first and memory_list.cursor == cursor + 1
        assert round(memory_list.scroll_y) == top + 1 and lines() == before
        status = str(app.screen.query_one("#status-line").render())
        assert "1 new above (g: go to them)" in status
