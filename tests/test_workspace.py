"""One instrument (issue 57): what is known anywhere is known everywhere. From a fresh
dashboard with pi's sessions present, never visiting Turns: a fix is proven before it
is written, and each record's recall log shows in the detail pane."""

from __future__ import annotations

from pathlib import Path

import pytest

from apphelpers import opened
from conftest import FIXTURES

SESSIONS = FIXTURES / "sessions"


async def test_a_fix_is_proven_in_a_fresh_dashboard_without_opening_turns(
    realistic: Path,
) -> None:
    from memevo_tui.dialogs.confirm import ConfirmScreen
    from memevo_tui.widgets.memory_list import MemoryList

    from apphelpers import dialog_text, press, stored, until

    async with opened(realistic, sessions=SESSIONS) as (app, pilot):
        assert app.query_one("#tabs").active == "memories"  # type: ignore[attr-defined]
        sessions = await app.state.replay.replayed()  # the one replay, started at load
        turns = [t for s in sessions for t in s.turns]
        record = next(i for t in reversed(turns) for i in t.now)
        scope = stored(realistic, record)["scope"]
        recent = sorted((t for t in turns if t.prompt.project == scope),
                        key=lambda t: t.prompt.moment_ms)[-100:]  # fmt: skip
        losing = sum(1 for t in recent if record in t.now)
        await press(pilot, "slash", *record, "enter")

        def on_it() -> bool:
            row = app.query_one(MemoryList).highlighted
            return row is not None and row.id == record

        await until(pilot, on_it, "the record")
        content = stored(realistic, record)["content"]
        await press(pilot, "e")
        await pilot.press("f7", *"Zebras graze quietly in the savanna at dawn.", "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        text = " ".join(dialog_text(app.screen).split())
        name = scope.rsplit("/", 1)[-1]
        assert "Correct this memory?" in text
        assert f"Of the last {len(recent)} prompt(s) in {name}, {losing} would no longer" in text
        await press(pilot, "n")
        assert stored(realistic, record)["content"] == content  # asked, and refused


async def test_a_fix_asks_first_even_before_the_replay_has_ended(realistic: Path) -> None:
    """The replay not known yet when `e` saves: it is worked out then (a notice says
    so) and the question is asked, never skipped."""
    from memevo_tui.dialogs.confirm import ConfirmScreen

    from apphelpers import Notes, make_app, press, stored, until, wait_loaded

    app = make_app(realistic)
    app.state.use_sessions(str(SESSIONS))
    async with app.run_test(size=(160, 50)) as pilot:
        app.state.replay.start = lambda: None  # type: ignore[method-assign]
        await wait_loaded(pilot)
        assert app.state.injections is None
        record = app.state.rows[0].id
        content = stored(realistic, record)["content"]
        notes = Notes(app)
        await press(pilot, "e")
        await pilot.press("f7", *"Zebras graze quietly.", "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        assert any("Replaying pi's sessions" in n for n, _ in notes.items)
        await press(pilot, "n")
        assert stored(realistic, record)["content"] == content


async def test_the_recall_log_shows_in_the_detail_pane_once_known(realistic: Path) -> None:
    from memevo_tui.widgets.memory_detail import MemoryDetail

    from apphelpers import drawn_text, until

    async with opened(realistic, sessions=SESSIONS) as (app, pilot):
        detail = app.query_one(MemoryDetail)
        await until(pilot, lambda: app.state.injections is not None, "the replay")
        await until(pilot, lambda: "Recall log:" in drawn_text(detail.part(detail.TURNS)),
                    "the recall log")  # fmt: skip


@pytest.mark.unit  # the palette provider's entries
async def test_the_palette_says_the_key_a_binding_has_after_a_remap(realistic: Path) -> None:
    from memevo_tui.app.commands import MemevoCommands

    async with opened(realistic, keymap={"app.time": "ctrl+y"}) as (app, _pilot):
        provider = MemevoCommands(app.screen)
        shown = {title: help_text for title, _, help_text in provider._entries()}
        assert shown["Time dial: show the store as of another day"] == "key: ctrl+y"
        assert shown["Reload from the store"] == "key: ctrl+r"
        assert shown["Filter this view"] == "key: /"


async def test_in_review_n_opens_turns_as_everywhere_and_k_keeps_an_item(
    realistic: Path,
) -> None:
    from textual.widgets import TabbedContent

    from memevo_tui.views.review import ReviewView

    from apphelpers import press

    async with opened(realistic) as (app, pilot):
        await press(pilot, "w")
        view = app.query_one(ReviewView)
        before = len(view.queue)
        await press(pilot, "K")
        assert len(view.queue) == before - 1  # kept: out of the queue until it changes
        await press(pilot, "n")
        assert app.query_one("#tabs", TabbedContent).active == "turns"


async def test_the_timelines_enter_reorders_the_memory_list_as_of_that_day(
    realistic: Path,
) -> None:
    """The moment is the workspace's: after the Timeline's enter ("dial there"), the memory
    list (sorted by update, newest first) starts with the records updated last before it."""
    from store import Memory, parse_ms

    from apphelpers import memory_list, press, settle, until

    async with opened(realistic) as (app, pilot):
        assert memory_list(app).sort_key == "updated"
        await press(pilot, "T", "left", "left", "enter")
        await until(pilot, lambda: app.state.as_of is not None, "the dial")
        await settle(pilot)
        as_of = app.state.as_of
        assert as_of is not None
        shown = [r for r in memory_list(app).rows if isinstance(r, Memory)]
        times = [parse_ms(r.updated_at) or 0.0 for r in shown]
        assert times == sorted(times, reverse=True) and max(times) <= as_of
        newest = max(parse_ms(r.updated_at) or 0.0 for r in app.state.rows
                     if isinstance(r, Memory) and r.active)  # fmt: skip
        assert times[0] == newest


async def test_a_key_means_one_thing_wherever_the_focus_is(realistic: Path) -> None:
    """Issue 57: in each view, for each widget that can take the focus, the keys of
    every node from it up to the app (global keys included) mean one thing each; a
    text box's default key the dashboard uses (ctrl+e) is passed up to it."""
    from textual.binding import Binding

    from memevo_tui.app.registry import VIEWS
    from memevo_tui.dialogs.menu import Menu
    from memevo_tui.widgets.debounced_input import DebouncedInput

    from apphelpers import press, until

    async with opened(realistic, sessions=SESSIONS) as (app, pilot):
        clashes, looked = [], 0
        for view in VIEWS:
            await press(pilot, view.key)
            pane = app.screen.query_one(f"#{view.id}")
            for widget in [pane, *pane.query("*")]:
                if not widget.focusable:
                    continue
                looked += 1
                meaning: dict[str, set[str]] = {}
                for node in [widget, *widget.ancestors]:
                    for b in type(node).BINDINGS:
                        if isinstance(b, Binding) and b.action != "pass_up":
                            for key in b.key.split(","):
                                meaning.setdefault(key.strip(), set()).add(b.id or b.action)
                clashes += [(view.id, type(widget).__name__, key, sorted(ids))
                            for key, ids in meaning.items() if len(ids) > 1]  # fmt: skip
        assert looked >= 16 and clashes == []
        await press(pilot, "m")
        app.query_one("#memories").query_one(DebouncedInput).focus()
        await press(pilot, "ctrl+e")  # export, from the filter box too
        await until(pilot, lambda: isinstance(app.screen, Menu), "the export menu")
