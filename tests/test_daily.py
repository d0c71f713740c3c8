"""The daily driver: what the list shows, decay in words, and keys as terminal users expect.

Pilot tests press real keys and check the store, the clipboard or the screen.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from test_many import events_since
from textual import events
from textual.widgets import Input, TabbedContent

from memevo_tui.core.glyphs import time_left
from memevo_tui.dialogs.confirm import ConfirmScreen
from memevo_tui.dialogs.help import HelpScreen
from memevo_tui.term.compat.testing import notifications
from memevo_tui.widgets.decay import decay_words
from memevo_tui.widgets.event_list import EventList
from memevo_tui.widgets.filter_box import FilterBox
from memevo_tui.widgets.memory_detail import MemoryDetail
from memevo_tui.widgets.memory_list import MemoryList, memory_cells
from memevo_tui.widgets.recall_list import RecallList
from memevo_tui.widgets.recall_pane import RecallPane
from memevo_tui.widgets.source_detail import SourceDetail
from memevo_tui.widgets.source_list import SourceList, source_state
from store import Memory, MemoryStore, Source, fixed_clock

from apphelpers import (
    DURABLE,
    Notes,
    event_count,
    last_event,
    list_view,
    make_app,
    opened,
    press,
    select,
    settle,
    stored,
    until,
    wait_loaded,
)
from conftest import FIXTURE_NOW

DISPUTED = "abf6e80a86af25d435cd7324"  # marked incorrect: stored as conflicted
STALLED = "compact:d0d967e6-1e99-4948-8dea-c34eae3dee87:d678ddf0"  # lease long expired
KYVERNO = "cd4d49e9d57a843430ffb194"  # injected for "kyverno"


def memories(app: Any) -> MemoryList:
    found: MemoryList = app.query_one("#memory-list", MemoryList)
    return found


def toasts(app: Any) -> list[str]:
    return [n.message for n in notifications(app)]


# ---------------------------------------------------------------- the list


async def test_the_content_gets_the_room_and_a_small_terminal_gets_rows(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        memory_list = memories(app)
        width = memory_list.scrollable_content_region.width
        fixed = sum(c.width + 1 for c in memory_list.visible_columns(width) if c.width)
        assert width - fixed >= 60  # at least 60 characters of memory text, pane open
        assert app.query_one("#memory-detail", MemoryDetail).display
    app = make_app(realistic)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        memory_list = memories(app)
        assert not app.query_one("#memory-detail", MemoryDetail).display  # stacked: hidden
        assert memory_list.scrollable_content_region.height - 1 >= 14  # rows under the header


async def test_z_hides_the_pane_and_the_split_moves_by_key(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        detail = app.query_one("#memory-detail", MemoryDetail)
        before = memories(app).size.width
        await press(pilot, "z")
        assert not detail.display and memories(app).size.width > before + 40
        await press(pilot, "z")
        assert detail.display
        wide = detail.size.width
        await press(pilot, "less_than_sign")
        assert detail.size.width > wide
        await pilot.press("greater_than_sign", "greater_than_sign")
        await settle(pilot)
        assert detail.size.width < wide


async def test_the_bar_is_time_left_in_the_state_colour(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        rows = [r for r in memories(app).rows if isinstance(r, Memory)]
        dormant = next(r for r in rows if r.state == "dormant")
        assert memory_cells(dormant)["fresh"] == "·····"  # empty: no time left
        assert dormant.quality.freshness >= 0.5  # although freshness stays above its floor
        aging = next(r for r in rows if r.state == "aging")
        assert 0 < time_left(aging) <= 0.5
        await pilot.press("a")  # forgotten and conflicted shown: no bar, for no time left
        await settle(pilot)
        shown = [r for r in memories(app).rows if isinstance(r, Memory)]
        gone = [r for r in shown if r.status in ("forgotten", "conflicted")]
        assert gone and all(memory_cells(r)["fresh"] == "  –  " for r in gone)
        assert all("█" not in memory_cells(r)["fresh"] for r in gone)
        await press(pilot, "a")
        for r in rows:
            assert (
                memories(app).cell_class(r, "fresh")
                == r.state
                == memories(app).cell_class(r, "state")
            )


async def test_disputed_looks_disputed(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await pilot.press("a")
        await select(pilot, DISPUTED)
        row = memories(app).highlighted
        assert isinstance(row, Memory) and row.status == "conflicted" and row.state == "disputed"
        assert memory_cells(row)["state"] == "!"
        body = " ".join(app.query_one("#memory-detail", MemoryDetail).plain.split())
        assert "! disputed" in body and "marked incorrect by you" in body
        assert "stored by pi as conflicted" in body


def test_decay_in_words(realistic: Path) -> None:
    import asyncio

    async def words() -> list[str]:
        clock = fixed_clock(FIXTURE_NOW)
        async with await MemoryStore.open(realistic, read_only=True, clock=clock) as store:
            load = await store.load_memories()
        by_id = {m.id: m for m in load.memories}
        state = next(m for m in load.memories if m.kind == "project_state" and m.state == "dormant")
        return [
            decay_words(state),
            decay_words(by_id["914865763607d795d17d5853"]),
            decay_words(by_id["3968293cbac7923e0e4edb5e"]),
        ]

    dormant, reinforced, pinned = asyncio.run(words())
    assert dormant.startswith(
        "project states go dormant 7 days after their last confirmation (aging after 3.5 days)"
    )
    assert "aging since" in dormant and "dormant since" in dormant
    assert "a later mention by evidence revives it" in dormant
    assert "confirmed 3 Oct 2026 (again, by later evidence; written 28 Aug 2024)" in reinforced
    assert "aging from 3 Oct 2027, dormant from 2 Oct 2028" in reinforced
    assert pinned.startswith("pinned: it never decays")


# ---------------------------------------------------------------- keys


async def test_e_uses_the_users_editor(realistic: Path, tmp_path: Path) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nprintf 'Prod CPU requests sit at 71%%.\\n' > \"$1\"\n")
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    os.environ["VISUAL"] = str(editor)
    try:
        async with opened(realistic) as (app, pilot):
            await select(pilot, DURABLE)
            await press(pilot, "e")
            assert isinstance(app.screen, ConfirmScreen)  # every fix asks first (issue 57)
            await press(pilot, "y")
            record = stored(realistic, DURABLE)
            assert record["content"] == "Prod CPU requests sit at 71%."
            assert record["evidence"]["basis"] == "manual_correction"
            # the same 4-800 rule: upstream's refusal, nothing written
            editor.write_text("#!/bin/sh\nprintf 'no' > \"$1\"\n")
            notes = Notes(app)
            before = event_count(realistic)
            await press(pilot, "e")
            assert event_count(realistic) == before
            assert "Correction must be 4" in notes.last()
            # an editor that fails writes nothing either
            editor.write_text("#!/bin/sh\nexit 3\n")
            await press(pilot, "e")
            assert event_count(realistic) == before and "status 3" in notes.last()
    finally:
        del os.environ["VISUAL"]


async def test_4_asks_first_and_names_the_consequence(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await select(pilot, DURABLE)
        before = event_count(realistic)
        await press(pilot, "4")
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "n")
        assert event_count(realistic) == before and stored(realistic, DURABLE)["status"] != (
            "conflicted"
        )
        await pilot.press("4", "y")
        await settle(pilot)
        assert stored(realistic, DURABLE)["status"] == "conflicted"
        assert last_event(realistic)["reason"].startswith("Feedback incorrect: manual:")
        assert "Marked incorrect: quarantined" in toasts(app)[-1]


async def test_y_and_Y_copy_and_say_so(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await select(pilot, DURABLE)
        await pilot.press("y")
        assert app.clipboard == DURABLE and "Copied its id" in toasts(app)[-1]
        await pilot.press("Y")
        assert app.clipboard == stored(realistic, DURABLE)["content"]
        await press(pilot, "l")
        sources = app.query_one(SourceList)
        paused = next(i for i, s in enumerate(sources.rows) if isinstance(s, Source) and s.paused)
        await pilot.press(*["j"] * paused, "y")
        source = sources.rows[paused]
        assert app.clipboard == f"/memory evolve {source.id}"
        assert "the pi command that resumes it" in toasts(app)[-1]


async def test_esc_leaves_every_box_and_clears_a_filter(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await pilot.press("i", "slash", *"kyverno")
        await settle(pilot)
        await pilot.press("escape", "m")  # esc leaves the prompt: m switches views
        await settle(pilot)
        assert app.query_one("#tabs", TabbedContent).active == "memories"
        assert app.query_one(RecallPane).prompt == "kyverno"
        await pilot.press("slash", *"kind:decision", "escape")
        await settle(pilot)
        assert app.focused is memories(app) and list_view(app).query == "kind:decision"
        await pilot.press("escape")  # in the list: clears the filter
        await settle(pilot)
        assert list_view(app).query == "" and len(memories(app).rows) == 186


async def test_filter_errors_show_inline_and_match_nothing(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        notes = Notes(app)
        await pilot.press("slash", *"kind:bogus")
        await settle(pilot)
        box = app.query_one("#filter-box", FilterBox)
        assert "unknown kind 'bogus'" in box.error and "nothing matches" in box.error
        assert memories(app).rows == []
        assert notes.items == []  # no toast, let alone one per keystroke
        await pilot.press("ctrl+u", *"kind:dec")  # an unambiguous prefix is enough
        await settle(pilot)
        assert box.error == ""
        assert {r.kind for r in memories(app).rows if isinstance(r, Memory)} == {"decision"}


async def test_slash_filters_the_view_you_are_in(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await press(pilot, "h")
        await pilot.press("slash")
        assert app.query_one("#tabs", TabbedContent).active == "history"
        assert isinstance(app.focused, Input) and app.focused.id == "history-filter"
        await pilot.press(*"verb:pin", "enter")
        await settle(pilot)
        events = app.query_one(EventList)
        assert len(events.rows) == 3 and all(e.reason == "pin" for e in events.rows)  # type: ignore[union-attr]
        await pilot.press("escape", "l")
        await settle(pilot)
        await pilot.press("slash", *"state:paused", "enter")
        await settle(pilot)
        sources = app.query_one(SourceList)
        assert len(sources.rows) == 5
        assert all(isinstance(s, Source) and s.paused for s in sources.rows)
        await pilot.press("s", "slash")
        assert isinstance(app.focused, Input) and app.focused.id == "search-input"


def burst(app: Any, *keys: str) -> None:
    """Keys arriving together, as a terminal delivers typing over ssh or a paste of key
    presses: all of them queued before the first is handled (no pause between)."""
    for key in keys:
        char = {"slash": "/", "colon": ":", "space": " "}.get(key, key if len(key) == 1 else None)
        app.post_message(events.Key(key, char))


async def test_keys_typed_ahead_go_where_the_key_before_them_sent_the_focus(
    realistic: Path,
) -> None:
    """ "/postgres" typed in one burst filters by "postgres": no letter reaches the list,
    where p pins and o sorts. A view switched to by a key gets the keys after it."""
    async with opened(realistic) as (app, pilot):
        before = event_count(realistic)
        burst(app, "slash", *"postgres", "enter")
        await settle(pilot)
        assert app.query_one("#filter", Input).value == "postgres"
        assert list_view(app).query == "postgres" and list_view(app).sort == "updated"
        assert app.focused is memories(app) and not isinstance(app.screen, ConfirmScreen)
        assert event_count(realistic) == before
        burst(app, "h", "slash", *"verb:pin")
        await settle(pilot)
        assert app.query_one("#tabs", TabbedContent).active == "history"
        assert app.query_one("#history-filter", Input).value == "verb:pin"
        assert event_count(realistic) == before


async def test_where_the_cursor_ends_depends_on_the_filter_not_on_typing_pauses(
    realistic: Path,
) -> None:
    """A filter typed with pauses applies its halves as it goes; the cursor ends on the
    record it was on when typing began if the filter shows it, else on the first row,
    whichever halves applied on the way."""
    async with opened(realistic) as (app, pilot):
        top = memories(app).rows[0].id
        await pilot.press("slash", *"origin:infra kind:fact is")
        await settle(pilot)  # a pause: this half applies, the cursor's record moves down
        await pilot.press(*":un")
        await settle(pilot)
        await pilot.press(*"pinned", "enter")
        await settle(pilot)
        listed = memories(app)
        assert list_view(app).query == "origin:infra kind:fact is:unpinned"
        assert listed.cursor == 0 and listed.rows[0].id == top  # where it was, still shown
        await pilot.press("j", "j")
        await settle(pilot)
        second = listed.rows[2].id
        await pilot.press("slash", "ctrl+u", *"origin:infra")
        await settle(pilot)
        await press(pilot, "enter")
        highlighted = listed.highlighted
        assert highlighted is not None and highlighted.id == second


async def test_history_reads_like_a_log_and_enter_opens_the_record(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await select(pilot, DURABLE)
        await press(pilot, "p")
        await press(pilot, "h")
        events = app.query_one(EventList)
        cells = events.cells(events.rows[0])
        assert cells["verb"] == "pin" and cells["kind"] == "F" and cells["origin"] == "infra"
        assert cells["text"].startswith("Prod cluster CPU requests")
        await pilot.press("slash", "ctrl+u", "escape", "enter")
        await settle(pilot)
        assert app.query_one("#tabs", TabbedContent).active == "memories"
        highlighted = memories(app).highlighted
        assert highlighted is not None and highlighted.id == DURABLE


async def test_a_stalled_run_looks_stalled(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await press(pilot, "l")
        sources = app.query_one(SourceList)
        index = next(i for i, s in enumerate(sources.rows) if s.id == STALLED)
        stalled = sources.rows[index]
        assert isinstance(stalled, Source) and stalled.state == "running"
        assert source_state(stalled, app.state.clock()) == "stalled"
        assert sources.cells(stalled)["state"] == "⊘ stalled"
        await pilot.press(*["j"] * index)
        await settle(pilot)
        from rich.console import Console

        console = Console(width=120, record=True)
        console.print(app.query_one(SourceDetail).body)
        text = console.export_text()
        assert "⊘ stalled" in text and "lease expired 2026-11-01 07:02:47 UTC" in text


async def test_enter_on_a_source_without_records_says_so(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        owners = {m.source_entry_id for m in app.state.rows if isinstance(m, Memory)}
        owners |= {
            m.evidence.source_id for m in app.state.rows if isinstance(m, Memory) and m.evidence
        }
        await press(pilot, "l")
        sources = app.query_one(SourceList)
        index = next(i for i, s in enumerate(sources.rows) if s.id not in owners)
        await pilot.press(*["j"] * index, "enter")
        await settle(pilot)
        assert app.query_one("#tabs", TabbedContent).active == "learning"
        assert list_view(app).query == ""  # no filter was set
        assert "No record in the store was created or last replaced" in toasts(app)[-1]


async def test_curation_keys_work_in_the_recall_list(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await pilot.press("i", "slash", *"kyverno", "enter")
        await settle(pilot)
        recall_list = app.query_one(RecallList)
        highlighted = recall_list.highlighted
        assert highlighted is not None and highlighted.memory.id == KYVERNO
        await press(pilot, "p")
        assert stored(realistic, KYVERNO)["layer"] == "pinned"
        assert app.query_one("#tabs", TabbedContent).active == "recall"  # in place
        pane = app.query_one(RecallPane)
        assert pane.result is not None
        rerun = next(c for c in pane.result.selected if c.memory.id == KYVERNO)
        assert rerun.memory.pinned  # the preview re-ran on the pinned record
        await press(pilot, "3")
        assert stored(realistic, KYVERNO)["feedback"]["accuracy"]["verdict"] == "accurate"


async def test_search_mode_says_selected(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await pilot.press("i", "slash", *"kyverno", "enter", "ctrl+t")
        await settle(pilot)
        recall_list = app.query_one(RecallList)
        outcomes = {recall_list.cells(c)["outcome"] for c in recall_list.rows if c.selected}
        assert outcomes == {"returned"}  # the model's recall tool
        await press(pilot, "ctrl+t")
        outcomes = {recall_list.cells(c)["outcome"] for c in recall_list.rows if c.selected}
        assert outcomes == {"selected"}


async def test_help_scrolls_and_lists_the_new_keys(realistic: Path) -> None:
    app = make_app(realistic)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        box = app.screen.query_one("#help")
        await press(pilot, "G")
        assert box.scroll_y > 0
        await press(pilot, "g")
        assert box.scroll_y == 0
        await pilot.press("j", "j")
        await settle(pilot)
        assert box.scroll_y > 0
        from rich.console import Console

        console = Console(width=160, record=True)
        console.print(app.screen.content)
        text = console.export_text()
        for needle in (
            "split.toggle",
            "list.copy",
            "memory.sort",
            "history.fields",
            "concept:port",
        ):
            assert needle in text


async def test_the_footer_fits_120_columns_and_the_live_indicator_is_never_cut(
    realistic: Path,
) -> None:
    app = make_app(realistic)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("slash", *"a very long filter that would push the live indicator off")
        await settle(pilot)
        for tab in ("m", "h", "l", "s", "i"):
            await pilot.press("escape", tab)
            await settle(pilot)
            screen = app.export_screenshot()
            assert "palette" in screen  # the footer's last key still shows
            status = app.screen.query_one("#status-line")
            assert str(status.render()).rstrip().endswith("? help")


async def test_sorted_headers_stay_readable(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await app.run_action("screen.ask('memories', 'sort_by', False, 'confirmed')")
        await settle(pilot)
        header = memories(app).render_line(0).text
        assert "AGE▼" in header
        await app.run_action(
            "screen.ask('memories', 'sort_by', False, 'fresh')"
        )  # days left: the fewest first
        await settle(pilot)
        assert "FRESH▲" in memories(app).render_line(0).text


async def test_a_half_typed_filter_that_settles_late_never_replaces_the_whole_one(
    realistic: Path,
) -> None:
    """On a slow machine the pause timer can fire between two keys; that value, handled
    after the whole query was submitted, must not filter the list."""
    from memevo_tui.widgets.debounced_input import DebouncedInput

    async with opened(realistic) as (app, pilot):
        box = app.screen.query_one("#memory-browser DebouncedInput", DebouncedInput)
        await pilot.press("slash", *"origin:inf")
        half = box.generation  # the value "origin:inf" as a pause would have posted it
        await pilot.press(*"ra", "enter")
        await settle(pilot)
        assert list_view(app).query == "origin:infra"
        box.post_message(DebouncedInput.Settled(box, "origin:inf", half))
        await settle(pilot)
        assert list_view(app).query == "origin:infra"
        shown = app.screen.query_one("#memory-list", MemoryList).rows
        assert shown and all(r.scope.endswith("/infra") for r in shown if isinstance(r, Memory))


@pytest.mark.unit  # the detail pane's field grid against Rich's
async def test_detail_fields_draw_as_the_rich_grid_draws_them(
    realistic: Path, hostile: Path
) -> None:
    """The detail's label/value columns are drawn without building a Rich table on
    every redraw; they must come out cell for cell as the table would draw them
    (hostile text included), at every width, falling back to the table itself
    where a word does not fit."""
    from rich.console import Console

    from memevo_tui.widgets import memory_detail

    built: list[Any] = []

    class Recorded(memory_detail._Fields):
        def __init__(self) -> None:
            super().__init__()
            built.append(self)

    def cells(console: Console, renderable: Any) -> list[list[tuple[str, str]]]:
        return [
            [(ch, str(seg.style or "")) for seg in line for ch in seg.text]
            for line in console.render_lines(renderable, console.options, pad=False)
        ]

    clock = fixed_clock(FIXTURE_NOW)
    records: list[Memory] = []
    for path, step in ((realistic, 6), (hostile, 1)):  # every hostile record
        async with await MemoryStore.open(path, read_only=True, clock=clock) as store:
            records += (await store.load_memories()).memories[::step]
    original = memory_detail._Fields
    memory_detail._Fields = Recorded  # type: ignore[misc]
    try:
        for m in records:
            memory_detail.describe_fields(m)
            memory_detail.describe_more(m)
    finally:
        memory_detail._Fields = original  # type: ignore[misc]
    assert len(built) == 2 * len(records)
    for fields in built:
        for width in (8, 14, 47, 48, 100):
            console = Console(width=width, color_system=None)
            assert cells(console, fields) == cells(console, fields._as_table()), width


async def test_time_left_sorts_by_days_most_urgent_first_and_the_menu_takes_j_k(
    realistic: Path,
) -> None:
    """A project state two days from dormancy comes before a fact with a week left and
    a decision with two, whatever share of their (different) horizons that is."""
    from memevo_tui.core.view import SORT_ORDER
    from memevo_tui.dialogs.menu import Menu

    async with opened(realistic) as (app, pilot):
        await pilot.press("slash", *"state:aging", "enter")
        await settle(pilot)
        await press(pilot, "o")
        assert isinstance(app.screen, Menu)
        start = SORT_ORDER.index(list_view(app).sort)
        target = SORT_ORDER.index("fresh")
        moves = ["j"] * (target - start) if target >= start else ["k"] * (start - target)
        await pilot.press("j", "k", *moves, "enter")  # j and k move, as in every list
        await settle(pilot)
        assert list_view(app).sort == "fresh" and not list_view(app).descending
        rows = [r for r in memories(app).rows if isinstance(r, Memory)]
        left = [r.days_until_dormant for r in rows]
        assert len({r.kind for r in rows}) >= 2 and len(rows) >= 3
        assert left == sorted(left, key=lambda d: float("inf") if d is None else d)
        await pilot.press("o", "G", "k", "k", "enter")  # G: the last key, g: the first
        await settle(pilot)
        assert list_view(app).sort == SORT_ORDER[-3]  # the last two read the recall log


async def test_review_says_when_its_filter_matches_nothing_and_never_repeats_itself(
    realistic: Path,
) -> None:
    from rich.console import Console

    from memevo_tui.views.review import ReviewView
    from memevo_tui.widgets.review_detail import describe_item
    from memevo_tui.widgets.review_list import ReviewList

    async with opened(realistic) as (app, pilot):
        await press(pilot, "w")
        view = app.query_one(ReviewView)
        review = app.query_one(ReviewList)
        soon = next(i for i in review.rows if i.reason == "dormant-soon")
        console = Console(width=200, record=True)
        console.print(describe_item(soon))
        detail = console.export_text()
        assert detail.count("pin it if it still matters") == 1  # said once, not twice
        assert "goes dormant in " in detail and "days days" not in detail
        await pilot.press("slash", *"zebra-crossing", "enter")
        await settle(pilot)
        assert review.rows == []
        line = review.render_line(1).text  # under the column titles
        assert f"No item matches zebra-crossing ({len(view.queue)} in the queue)." in line
        assert "queue is empty" not in line


async def test_help_lists_the_palette_key_and_a_key_map_can_move_it(realistic: Path) -> None:
    from rich.console import Console

    async with opened(realistic, keymap={"app.palette": "ctrl+k"}) as (app, pilot):
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=200, record=True)
        console.print(app.screen.content)
        text = console.export_text()
        assert "The command palette: every action by name" in text and "app.palette" in text
        await press(pilot, "escape")
        await pilot.press("ctrl+k")  # the palette, where the key map put it
        await settle(pilot)
        from textual.command import CommandPalette

        assert isinstance(app.screen, CommandPalette)


async def test_a_short_line_drops_the_columns_that_say_least(realistic: Path) -> None:
    """At 120x40 the origin stays, two projects being listed; filtered to one project,
    the origin (the same on every row) goes first and the evidence and feedback stay."""
    app = make_app(realistic)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_loaded(pilot)

        def header() -> list[str]:
            return memories(app).render_line(0).text.split()

        assert "ORIGIN" in header() and "CONTENT" in header()
        await pilot.press("slash", *"origin:infra", "enter")
        await settle(pilot)
        assert "ORIGIN" not in header()
        assert {"E", "FB", "K"} <= set(header())


async def test_the_time_dial_greys_out_the_write_keys_and_they_still_say_why(
    realistic: Path,
) -> None:
    from memevo_tui.term.compat.testing import FooterKey

    async with opened(realistic) as (app, pilot):

        def greyed() -> dict[str, bool]:
            return {k.key: k.has_class("-disabled") for k in app.screen.query(FooterKey)}

        assert greyed()["p"] is False and greyed()["d"] is False
        await pilot.press("t", *"+30d", "enter")
        await settle(pilot)
        keys = greyed()
        assert keys["p"] and keys["d"] and keys["e"] and keys["u"]
        assert not keys["z"] and not keys["space"]  # the others still work
        before = event_count(realistic)
        await press(pilot, "p")
        assert event_count(realistic) == before
        assert "time dial" in notifications(app)[-1].message
        await press(pilot, "h")
        assert greyed()["u"]  # undo in History too
        await press(pilot, "0")
        assert not greyed()["u"]


async def test_esc_after_opening_a_line_of_the_inbox_brings_back_the_view(
    realistic: Path,
) -> None:
    """Enter on "4 gone dormant" shows them, hidden ones too; esc clears that filter
    and hides forgotten and conflicted records again, as before."""
    from memevo_tui.core.appstate import AppState, Visit
    from memevo_tui.dialogs.inbox import InboxScreen

    AppState(realistic).save_visit(Visit(230, fixed_clock("2026-10-30T12:00:00.000Z")()))
    async with opened(realistic) as (app, pilot):
        assert isinstance(app.screen, InboxScreen)
        before = (list_view(app).query, list_view(app).show_hidden, len(memories(app).rows))
        assert before == ("", False, 186)
        await press(pilot, "j", "enter")  # below the diff: the first line of records
        assert list_view(app).query.startswith("id:") and list_view(app).show_hidden
        await press(pilot, "escape")
        after = (list_view(app).query, list_view(app).show_hidden, len(memories(app).rows))
        assert after == before
        assert not any(
            isinstance(r, Memory) and not r.active for r in memories(app).rows
        )  # no forgotten or conflicted record left in view


async def test_the_palette_lists_textuals_own_entries_under_app_after_ours(
    realistic: Path,
) -> None:
    from textual.command import CommandList

    async with opened(realistic) as (app, pilot):
        await press(pilot, "ctrl+p")
        listed = app.screen.query_one(CommandList)

        def titles() -> list[str]:
            return [
                str(listed.get_option_at_index(i).prompt).split("\n")[0]
                for i in range(listed.option_count)
            ]

        await until(pilot, lambda: any(t.startswith("App: ") for t in titles()), "the list")
        await settle(pilot)
        shown = titles()
        first_stock = next(i for i, t in enumerate(shown) if t.startswith("App: "))
        assert shown[0] == "Pin or unpin the selected memory"
        assert all(t.startswith("App: ") for t in shown[first_stock:])
        assert {"App: Theme", "App: Screenshot", "App: Quit"} <= set(shown)
        assert not {"Theme", "Screenshot", "Keys", "Maximize"} & set(shown)
        await pilot.press(*"theme")
        await settle(pilot)
        await until(pilot, lambda: titles() and titles()[0] == "App: Theme", "a search")


async def test_a_key_typed_right_after_esc_goes_where_esc_went(realistic: Path) -> None:
    """From the recall prompt, esc then m shows the memory list, however quickly they
    come: as two keys in one burst, or as the alt+m a terminal's ESC m reads as."""
    from textual.widgets import TabbedContent

    for burst in (["escape", "m"], ["alt+m"]):
        async with opened(realistic) as (app, pilot):
            await pilot.press("i", "slash", *"kyverno")
            await settle(pilot)
            prompt = app.query_one("#recall-input", Input)
            assert app.focused is prompt
            for key in burst:  # queued together: the second waits for nothing
                app.post_message(events.Key(key, "\x1b" if key == "escape" else None))
            await settle(pilot)
            assert app.query_one("#tabs", TabbedContent).active == "memories", burst
            assert prompt.value == "kyverno", burst


async def palette(pilot: Any, words: str) -> None:
    await press(pilot, "ctrl+p")
    await pilot.press(*words, "enter")
    await settle(pilot)


async def test_palette_verbs_act_as_their_keys_do_in_the_view_shown(realistic: Path) -> None:
    """ "Mark or unmark" marks; a verb with records marked asks about all of them; in
    Recall, a verb acts on the recall list's record, not on the hidden memory list's."""
    from memevo_tui.dialogs.confirm import ConfirmScreen
    from memevo_tui.views.memories import MemoriesView

    async with opened(realistic) as (app, pilot):
        view = app.query_one(MemoriesView)
        first = memories(app).highlighted
        assert first is not None
        await palette(pilot, "mark or unmark")
        assert set(view.marks) == {first.id}
        await pilot.press("j")
        await palette(pilot, "mark or unmark")
        assert len(view.marks) == 2
        await palette(pilot, "forget the selected")
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.title_text == "Forget: 2 marked record(s)?"
        await press(pilot, "n")
        await pilot.press("escape")  # the marks go
        await settle(pilot)
        await pilot.press("i", "slash", *"kyverno", "tab")
        await settle(pilot)
        recalled = app.query_one(RecallList).highlighted
        hidden = memories(app).highlighted
        assert recalled is not None and hidden is not None
        assert recalled.memory.id != hidden.id
        await palette(pilot, "pin or unpin")
        await until(
            pilot, lambda: stored(realistic, recalled.memory.id)["layer"] == "pinned", "the pin"
        )
        assert last_event(realistic)["after"][0]["id"] == recalled.memory.id


async def test_p_p_in_one_burst_pins_then_unpins(realistic: Path) -> None:
    """Two quick p: the second acts on the record as the first left it (unpin, at the
    new revision), not on the row as it was drawn (a pin at the old revision, which
    the store refused as changed under you, reloading everything)."""
    async with opened(realistic) as (app, pilot):
        row = memories(app).highlighted
        assert isinstance(row, Memory) and not row.pinned
        before = event_count(realistic)
        for _ in range(2):
            app.post_message(events.Key("p", "p"))
        await until(pilot, lambda: event_count(realistic) == before + 2, "two writes")
        await settle(pilot)
        record = stored(realistic, row.id)
        assert record["layer"] == row.layer and record["revision"] == row.revision + 2
        assert [e["reason"] for e in events_since(realistic, 2)] == ["pin", "unpin"]
        assert not any(n.title == "Changed under you" for n in notifications(app))
