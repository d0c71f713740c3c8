"""Pilot tests: the dashboard on real stores, driven by key presses."""

from __future__ import annotations

from pathlib import Path

import pytest

from memevo_tui.__main__ import main
from memevo_tui.widgets.memory_detail import MemoryDetail
from memevo_tui.widgets.memory_list import MemoryList
from store import CorruptRow, Memory

from apphelpers import make_app, wait_loaded


async def test_dashboard_lists_every_record_and_follows_the_cursor(realistic: Path) -> None:
    app = make_app(realistic)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_loaded(pilot)
        memory_list = app.query_one(MemoryList)
        assert len(memory_list.rows) == 205
        first = memory_list.highlighted
        assert isinstance(first, Memory)
        await pilot.press("j", "j")
        assert memory_list.cursor == 2
        await pilot.press("k")
        assert memory_list.cursor == 1
        await pilot.press("G")
        assert memory_list.cursor == 204
        await pilot.press("g")
        assert memory_list.cursor == 0
        body = str(app.query_one("#detail-body").render())
        assert first.content[:30] in body
        await pilot.press("tab")
        assert app.focused is app.query_one(MemoryDetail)


async def test_hostile_store_is_shown_safely(hostile: Path) -> None:
    app = make_app(hostile)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_loaded(pilot)
        memory_list = app.query_one(MemoryList)
        rows = memory_list.rows
        assert len(rows) == 32
        corrupt = [r for r in rows if isinstance(r, CorruptRow)]
        assert {r.id for r in corrupt} == {"corrupt-json-0001", "corrupt-hash-0001"}
        assert rows[0] in corrupt  # flagged at the top, not hidden
        # walk every row through the detail pane: nothing crashes, nothing raw reaches the screen
        for _ in rows:
            await pilot.press("j")
        screen = app.export_screenshot()
        assert "\x1b" not in screen and "\x07" not in screen
        # clicking markup-looking content runs nothing
        await pilot.click(MemoryList, offset=(60, 5))
        assert app.is_running


async def test_read_only_title(realistic: Path) -> None:
    app = make_app(realistic, read_only=True)
    async with app.run_test() as pilot:
        await wait_loaded(pilot)
        assert "read-only" in app.sub_title


def test_smoke_entry_point_on_the_demo(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--demo", "--smoke"]) == 0
    assert "smoke run ok" in capsys.readouterr().out
