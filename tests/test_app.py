"""Pilot tests: the dashboard on real stores, driven by key presses, checked in the store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memevo_tui.__main__ import main
from memevo_tui.core.glyphs import time_left
from memevo_tui.dialogs.confirm import ConfirmScreen
from memevo_tui.dialogs.correct import CorrectScreen
from memevo_tui.dialogs.help import HelpScreen
from memevo_tui.dialogs.menu import Menu
from memevo_tui.widgets.event_diff import EventDiff
from memevo_tui.widgets.event_list import EventList
from memevo_tui.widgets.memory_detail import MemoryDetail
from memevo_tui.widgets.memory_list import MemoryList
from store import CorruptRow, Event, Memory

from apphelpers import (
    CONFLICTED,
    DURABLE,
    Notes,
    event_count,
    last_event,
    list_view,
    memory_list,
    opened,
    press,
    select,
    settle,
    stored,
)


async def test_browse_sort_filter_and_toggle(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        rows = memory_list(app).rows
        assert len(rows) == 205 - 15 - 4  # forgotten and conflicted hidden by default
        first = memory_list(app).highlighted
        assert isinstance(first, Memory)
        await pilot.press("j", "j", "k")
        assert memory_list(app).cursor == 1
        await pilot.press("G")
        assert memory_list(app).cursor == len(rows) - 1
        await pilot.press("g")
        assert memory_list(app).cursor == 0
        await settle(pilot)
        body = " ".join(app.query_one("#memory-detail", MemoryDetail).plain.split())
        assert " ".join(first.content[:30].split()) in body
        await settle(pilot)
        assert "History (" in app.query_one("#memory-detail", MemoryDetail).plain
        await press(pilot, "a")
        assert len(memory_list(app).rows) == 205
        await pilot.press("a")
        # sort: o opens a menu of the columns (the current one first marked), O reverses
        await press(pilot, "o")
        assert isinstance(app.screen, Menu)
        await pilot.press("down", "enter")
        await settle(pilot)
        assert list_view(app).sort == "confirmed" and list_view(app).descending
        await pilot.press("o", "down", "down", "enter")
        await settle(pilot)
        assert list_view(app).sort == "state"
        await pilot.press("o", "enter")  # the current column again: reversed
        await settle(pilot)
        assert list_view(app).sort == "state" and list_view(app).descending
        await pilot.press("o", "escape")
        await settle(pilot)
        assert list_view(app).sort == "state" and not isinstance(app.screen, Menu)
        await app.run_action(
            "screen.ask('memories', 'sort_by', False, 'share')"
        )  # share of its horizon left
        fresh = [time_left(r) for r in memory_list(app).rows if isinstance(r, Memory)]
        assert fresh == sorted(fresh, reverse=True)
        await pilot.press("O")
        fresh = [time_left(r) for r in memory_list(app).rows if isinstance(r, Memory)]
        assert fresh == sorted(fresh)
        # filter as you type
        await pilot.press("slash", *"kind:decision state:dormant", "enter")
        await settle(pilot)
        shown = memory_list(app).rows
        assert len(shown) == 16
        assert all(
            isinstance(r, Memory) and r.kind == "decision" and r.state == "dormant" for r in shown
        )
        assert app.focused is memory_list(app)
        await pilot.press("slash", "ctrl+u", "enter")
        await settle(pilot)
        assert len(memory_list(app).rows) == 186
        await pilot.press("tab")
        assert isinstance(app.focused, MemoryDetail)


async def test_pin_and_unpin_with_p(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        notes = Notes(app)
        await select(pilot, DURABLE)
        await press(pilot, "p")
        assert stored(realistic, DURABLE)["layer"] == "pinned"
        assert last_event(realistic)["reason"] == "pin"
        assert "Pinned" in notes.last()
        highlighted = memory_list(app).highlighted
        assert isinstance(highlighted, Memory) and highlighted.pinned  # updated in place
        await press(pilot, "p")
        assert stored(realistic, DURABLE)["layer"] == "durable"
        assert last_event(realistic)["reason"] == "unpin"


@pytest.mark.parametrize(
    ("key", "verdict", "slot"),
    [("1", "useful", "utility"), ("2", "unhelpful", "utility"), ("3", "accurate", "accuracy")],
)
async def test_feedback_keys(realistic: Path, key: str, verdict: str, slot: str) -> None:
    async with opened(realistic) as (_app, pilot):
        await select(pilot, DURABLE)
        await pilot.press(key)
        await settle(pilot)
        assert stored(realistic, DURABLE)["feedback"][slot]["verdict"] == verdict
        assert last_event(realistic)["reason"].startswith(f"Feedback {verdict}: manual:")


async def test_incorrect_quarantines_and_a_repeat_is_unchanged(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        notes = Notes(app)
        await select(pilot, DURABLE)
        await pilot.press("4")  # asks first: it quarantines the record
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "y")
        record = stored(realistic, DURABLE)
        assert record["status"] == "conflicted"
        assert "Marked incorrect: quarantined" in notes.items[-1][0]
        assert record["feedback"]["accuracy"]["verdict"] == "incorrect"
        # the record left the default view; a second verdict is refused with upstream's reason
        await pilot.press("a")
        await select(pilot, DURABLE)
        before = event_count(realistic)
        await press(pilot, "1")
        assert event_count(realistic) == before
        assert "Resolve/correct the memory first" in notes.last()


async def test_forget_asks_first(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await select(pilot, DURABLE)
        before = event_count(realistic)
        await press(pilot, "d")
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "n")
        assert event_count(realistic) == before
        assert stored(realistic, DURABLE)["status"] == "provisional"
        await press(pilot, "d")
        await press(pilot, "y")
        assert stored(realistic, DURABLE)["status"] == "forgotten"
        assert last_event(realistic)["reason"] == "forget"


async def test_correct_in_the_editor(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await select(pilot, DURABLE)
        await press(pilot, "e")
        assert isinstance(app.screen, CorrectScreen)
        await pilot.press("f7", *"Prod CPU requests are at 70%.", "ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)  # every fix asks first (issue 57)
        await press(pilot, "y")
        record = stored(realistic, DURABLE)
        assert record["content"] == "Prod CPU requests are at 70%."
        assert record["status"] == "confirmed"
        assert record["evidence"]["basis"] == "manual_correction"
        # too short: upstream's refusal, nothing written
        before = event_count(realistic)
        await pilot.press("e", "f7", *"no", "ctrl+s")
        await settle(pilot)
        assert event_count(realistic) == before


async def test_resolve_conflict_and_refusal(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        notes = Notes(app)
        await select(pilot, DURABLE)
        await press(pilot, "r")
        assert "Memory is not conflicted" in notes.last()
        await pilot.press("slash", "ctrl+u", "enter")
        await pilot.press("a")
        await select(pilot, CONFLICTED)
        await press(pilot, "r")
        assert stored(realistic, CONFLICTED)["status"] == "confirmed"
        assert last_event(realistic)["reason"] == "resolve"


async def test_conflict_marks_two_records(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await pilot.press("slash", *"origin:infra kind:fact", "enter")
        await settle(pilot)
        a, b = memory_list(app).rows[0], memory_list(app).rows[1]
        await pilot.press("c", "j", "c")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "y")
        assert stored(realistic, a.id)["status"] == "conflicted"
        assert stored(realistic, b.id)["status"] == "conflicted"
        assert last_event(realistic)["reason"] == "conflict"


async def test_undo_the_records_last_event_with_preview(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await select(pilot, DURABLE)
        await press(pilot, "p")
        await press(pilot, "u")
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "y")
        record = stored(realistic, DURABLE)
        assert record["layer"] == "durable" and record["revision"] == 3
        assert last_event(realistic)["reason"].startswith("Undo ")


async def test_history_pane_and_undo_refusals(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        notes = Notes(app)
        await select(pilot, DURABLE)
        await pilot.press("p")  # the record's capture event can no longer be undone
        await settle(pilot)
        await press(pilot, "h")
        events = app.query_one(EventList)
        assert len(events.rows) == 200 and isinstance(events.rows[0], Event)
        assert app.focused is events
        assert events.rows[0].reason == "pin"
        before = event_count(realistic)
        await press(pilot, "j")
        assert "Undo would be refused: Memory changed since this event" in str(
            app.query_one("#event-undo-preview").render()
        )
        await press(pilot, "u")
        assert "Memory changed since this event; undo refused" in notes.last()
        # an event that changed nothing explains why it cannot be undone
        empty = next(i for i, e in enumerate(events.rows) if isinstance(e, Event) and not e.after)
        await pilot.press("g", *(["j"] * empty), "u")
        await settle(pilot)
        assert "Event has no memory changes" in notes.last()
        # the selected event's diff marks what changed
        await press(pilot, "g")
        diff = app.query_one(EventDiff).body
        from rich.console import Console

        console = Console(width=100, record=True)
        console.print(diff)
        text = console.export_text()
        assert "• " in text and "layer" in text and "pinned" in text
        # paging: G loads more events as the cursor nears the end
        await press(pilot, "G")
        await press(pilot, "G")
        assert len(events.rows) == 247
        assert event_count(realistic) == before


async def test_history_undo_writes(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await select(pilot, DURABLE)
        await press(pilot, "1")
        await press(pilot, "h")
        events = app.query_one(EventList)
        assert isinstance(events.rows[0], Event) and events.rows[0].reason.startswith(
            "Feedback useful"
        )
        await press(pilot, "u")
        await press(pilot, "y")
        assert "feedback" not in stored(realistic, DURABLE)
        assert last_event(realistic)["reason"] == f"Undo {events.rows[1].id}"


async def test_search_pane(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await pilot.press("s", "slash", *"postgres", "enter")
        await settle(pilot)
        results = app.query_one("#search-results", MemoryList)
        assert 0 < len(results.rows) <= 10
        assert all(
            isinstance(r, Memory) and "postgres" in (r.content + " ".join(r.search_terms)).lower()
            for r in results.rows
        )
        assert (
            any(isinstance(r, Memory) and r.state == "dormant" for r in results.rows)
            or len(results.rows) < 10
        )
        # curation works on search results too
        target = results.highlighted
        assert isinstance(target, Memory)
        await press(pilot, "1")
        assert stored(realistic, target.id)["feedback"]["utility"]["verdict"] == "useful"


async def test_read_only_write_keys_explain_and_write_nothing(realistic: Path) -> None:
    async with opened(realistic, read_only=True) as (app, pilot):
        notes = Notes(app)
        before = event_count(realistic)
        for key in ("p", "1", "2", "3", "4", "d", "e", "r", "c", "u"):
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, type(app.screen)) and not isinstance(
                app.screen, ConfirmScreen
            )
            assert "Read-only" in notes.last()
        assert event_count(realistic) == before
        assert "read-only" in app.sub_title


async def test_a_record_changed_by_pi_meanwhile_is_refused(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        notes = Notes(app)
        await select(pilot, DURABLE)
        # another writer (pi) pins the record after the dashboard loaded it
        con = sqlite3.connect(realistic)
        data = stored(realistic, DURABLE)
        data.update(revision=data["revision"] + 1, layer="pinned")
        con.execute(
            "UPDATE memories SET data=? WHERE id=?",
            (json.dumps(data, separators=(",", ":")), DURABLE),
        )
        con.commit()
        con.close()
        before = event_count(realistic)
        await press(pilot, "1")
        assert event_count(realistic) == before
        assert "changed since you loaded it" in notes.last()


async def test_help_screen_and_palette(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = app.screen.content
        from rich.console import Console

        console = Console(width=160, record=True)
        console.print(text)
        rendered = console.export_text()
        for needle in ("memory.pin", "memory.forget", "history.undo", "dormant", "kind:fact"):
            assert needle in rendered
        await press(pilot, "escape")
        assert not isinstance(app.screen, HelpScreen)
        await press(pilot, "ctrl+p")
        assert app.screen.__class__.__name__ == "CommandPalette"
        await pilot.press(*"forget", "enter")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)  # the palette reached the forget action
        await pilot.press("n")


async def test_keymap_remaps_a_binding(realistic: Path) -> None:
    async with opened(realistic, keymap={"memory.pin": "x"}) as (_app, pilot):
        await select(pilot, DURABLE)
        await press(pilot, "x")
        assert stored(realistic, DURABLE)["layer"] == "pinned"


async def test_hostile_store_is_shown_safely(hostile: Path) -> None:
    async with opened(hostile) as (app, pilot):
        notes = Notes(app)
        rows = memory_list(app).rows
        corrupt = [r for r in rows if isinstance(r, CorruptRow)]
        assert {r.id for r in corrupt} == {"corrupt-json-0001", "corrupt-hash-0001"}
        assert rows[0] in corrupt  # flagged at the top, not hidden
        await press(pilot, "p")
        assert "never acted upon" in notes.last()
        await pilot.press("a")
        for _ in range(len(memory_list(app).rows)):
            await pilot.press("j")
        screen = app.export_screenshot()
        assert "\x1b" not in screen and "\x07" not in screen
        await pilot.click(MemoryList, offset=(80, 8))
        await press(pilot, "h")
        events = app.query_one(EventList)
        assert len(events.rows) == 18  # every hostile event, corrupt ones included
        for _ in range(20):  # past the last one
            await press(pilot, "j")
        # every hostile event on the way was drawn, and the diff follows the cursor
        assert events.cursor == 17
        assert app.query_one(EventDiff).shown is events.rows[17]
        screen = app.export_screenshot()
        assert "\x1b" not in screen and "\x07" not in screen


def test_smoke_entry_point_on_the_demo(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--demo", "--smoke"]) == 0
    assert "smoke run ok" in capsys.readouterr().out
