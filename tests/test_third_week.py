"""A newcomer's third week (issue 59): what tripped them, each as it was met."""

from __future__ import annotations

from pathlib import Path

from memevo_tui.dialogs.confirm import ConfirmScreen
from memevo_tui.dialogs.correct import CorrectScreen
from memevo_tui.term.compat.testing import notifications

from apphelpers import (
    dialog_text,
    make_app,
    memory_list,
    opened,
    press,
    select,
    settle,
    stored,
    until,
    wait_loaded,
    words,
)
from conftest import FIXTURES

SHORT = "e95e2126a08864e18d8594a1"  # "[done] Runbook for k3s node replacement merged"
LONG = "cf8f3f95303d31090296a36f"  # "... written and merged."


async def test_u_in_review_previews_then_undoes_the_records_last_event(realistic: Path) -> None:
    from memevo_tui.views.review import ReviewView

    async with opened(realistic) as (app, pilot):
        await press(pilot, "w")
        view = app.query_one(ReviewView)
        await until(pilot, lambda: bool(view.queue), "the queue")
        await press(pilot, "u")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the undo preview")
        assert "Undo" in dialog_text(app.screen)
        await press(pilot, "n")


async def test_the_project_picker_offers_the_legacy_records(realistic: Path) -> None:
    from textual.widgets import OptionList

    async with opened(realistic) as (app, pilot):
        await press(pilot, "at")
        options = app.screen.query_one(OptionList)
        shown = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert shown[-1] == "No project: 11 legacy record(s)"
        await press(pilot, "G", "enter")
        assert app.state.scope.project == "legacy"
        await until(pilot, lambda: len(memory_list(app).rows) > 0, "the legacy records")
        assert all(getattr(r, "scope", "") == "legacy" for r in memory_list(app).rows)


async def test_an_empty_turns_list_says_why(realistic: Path) -> None:
    from memevo_tui.views.turns import TurnsView
    from memevo_tui.widgets.turn_list import SessionList

    app = make_app(realistic)
    app.state.use_sessions(str(FIXTURES / "sessions"))
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_loaded(pilot)
        await press(pilot, "n")
        view = app.query_one(TurnsView)
        await until(pilot, lambda: bool(view.sessions) and not view.busy, "the replay")
        await press(pilot, "slash", *"zebra crossing", "enter")
        sessions = app.query_one(SessionList)
        assert not sessions.rows
        prompts = sum(len(s.turns) for s in view.sessions)
        counted = f"{prompts} prompt(s) in 88 session(s)"
        assert sessions.empty_text == f"No prompt matches 'zebra crossing' ({counted})."
        await press(pilot, "escape")
        log = app.state.injections
        assert log is not None
        never = next(m.id for m in app.state.rows if not log.counts().get(m.id))
        await press(pilot, "slash", *f"record:{never}", "enter")
        assert sessions.empty_text == (
            f"pi never injected {never} in the {prompts} prompt(s) replayed.")  # fmt: skip


async def test_merge_preview_counts_only_the_texts_it_blocks(realistic: Path) -> None:
    """The kept text unchanged: only the forgotten record's text is blocked; and the
    editor's last line break is not shown as part of the kept text."""
    async with opened(realistic) as (app, pilot):
        for memory_id in (SHORT, LONG):
            await select(pilot, memory_id)
            await pilot.press("space")
        await settle(pilot)
        await press(pilot, "M")
        assert isinstance(app.screen, CorrectScreen)
        long = stored(realistic, LONG)["content"]
        await pilot.press("f7", *long, "enter", "ctrl+s")  # a trailing line break typed
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the merge preview")
        text = words(dialog_text(app.screen))
        assert "pi will also never learn this text again" in text and "⏎" not in text
        await press(pilot, "n")


async def test_the_editor_says_its_keys(realistic: Path) -> None:
    """ctrl+a is the line's start in Textual's text box: the editor says so, and which
    keys save, cancel, select all and undo, as the key map has them."""
    from textual.widgets import Static

    app = make_app(realistic, keymap={"correct.save": "ctrl+w"})
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await press(pilot, "e")
        assert isinstance(app.screen, CorrectScreen)
        keys = str(app.screen.query_one("#correct-keys", Static).render())
        assert "save" in keys and "f7 select all" in keys and "ctrl+z undo" in keys
        assert "ctrl+a line start" in keys and "w save" in keys


async def test_after_a_write_in_review_the_cursor_follows_the_record(realistic: Path) -> None:
    """Item 2: ``4`` on the fifth item moves its record up the queue (or out of it): the
    cursor follows the record, or stays on the neighbour and says so."""
    from memevo_tui.views.review import ReviewView
    from memevo_tui.widgets.review_list import ReviewList

    async with opened(realistic) as (app, pilot):
        await press(pilot, "w")
        view = app.query_one(ReviewView)
        await until(pilot, lambda: bool(view.queue), "the queue")
        queue = app.query_one(ReviewList)
        followed = left = 0
        for n, (reason, key) in enumerate([("not-grounded", "4"), ("dormant-soon", "p")]):
            at = next(i for i, item in enumerate(queue.rows) if item.reason == reason)
            await press(pilot, "g", *"j" * (at + 1))  # the second of its kind
            item = queue.highlighted
            assert item is not None and item.reason == reason
            acted = queue.record(item)
            before = stored(realistic, acted.id)
            await press(pilot, key)
            if isinstance(app.screen, ConfirmScreen):
                await press(pilot, "y")
            written = lambda a=acted.id, b=before: stored(realistic, a) != b  # noqa: E731
            await until(pilot, written, f"{key} written")
            await settle(pilot)
            now = queue.highlighted
            assert now is not None
            if any(m.id == acted.id for i in queue.rows for m in i.records):
                assert queue.record(now).id == acted.id
                followed += 1
            else:
                assert queue.cursor == at + 1
                said = [str(n.message) for n in notifications(app)]
                assert any("It left the queue" in s for s in said), said
                left += 1
        assert followed and left, (followed, left)


async def test_at_80x24_every_views_footer_keeps_quit_and_help(realistic: Path) -> None:
    """Item 5: the footer fits its width; the keys that do not fit leave, never q or ?."""
    from memevo_tui.term.compat.testing import FooterKey

    app = make_app(realistic)
    app.state.use_sessions(str(FIXTURES / "sessions"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        for key in ["m", "w", "h", "l", "s", "i", "T", "n", "m"]:
            await press(pilot, key)
            keys = list(app.screen.query(FooterKey))
            shown = {k.description: k for k in keys}
            assert {"Quit", "Help"} <= shown.keys(), (key, sorted(shown))
            palette = next(k for k in keys if k.has_class("-command-palette"))
            for k in keys:
                if k is not palette:
                    assert k.region.right <= palette.region.x, (key, k.description, k.region)


async def test_notices_cover_neither_the_status_line_nor_a_dialog(realistic: Path) -> None:
    """Item 5: a notice stands above the status line; one that comes while a dialog is
    open waits for it to close (a warning shows at once, at the top)."""
    from memevo_tui.term.compat.testing import Toast
    from memevo_tui.widgets.status_line import StatusLine

    app = make_app(realistic)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_loaded(pilot)
        app.notify("Pinned\nsecond line")  # notices shown: run_test(notifications=True)
        await until(pilot, lambda: bool(app.screen.query(Toast)), "the notice")
        await settle(pilot)
        status = app.screen.query_one(StatusLine).region
        for toast in app.screen.query(Toast):
            assert not toast.region.overlaps(status), (toast.region, status)
        app.clear_notifications()
        await press(pilot, "d")  # forget asks first
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        app.notify("Live updates paused")
        await settle(pilot)
        assert not app.screen.query(Toast)
        app.notify("The store is busy", severity="warning")
        await until(pilot, lambda: bool(app.screen.query(Toast)), "the warning")
        await settle(pilot)
        dialog = app.screen.query_one("#dialog").region
        for toast in app.screen.query(Toast):
            assert toast.region.y < dialog.y or not toast.region.overlaps(dialog)
        await press(pilot, "n")
        await until(
            pilot,
            lambda: any("Live updates paused" in str(t.render()) for t in app.screen.query(Toast)),
            "the held notice, once the dialog closed",
        )


async def test_the_recall_preview_keeps_the_view_keys_until_a_prompt_begins(
    realistic: Path,
) -> None:
    """Item 6: ``i`` then ``h`` goes to History; ``/`` or a key no binding takes begins a
    prompt; the box's placeholder says how."""
    from textual.widgets import Input, TabbedContent

    async with opened(realistic) as (app, pilot):
        tabs = app.query_one("#tabs", TabbedContent)
        await press(pilot, "i")
        box = app.query_one("#recall-input", Input)
        assert str(box.placeholder).startswith("/ to type a prompt")
        await press(pilot, "h")
        assert tabs.active == "history" and box.value == ""
        await press(pilot, "i", "g", "G")
        assert tabs.active == "recall" and box.value == ""
        await press(pilot, "slash", *"kyverno")
        assert box.value == "kyverno" and app.focused is box
        await press(pilot, "escape", "ctrl+a")  # out of the box
        box.value = ""
        await press(pilot, "x")  # no binding takes x: it begins the prompt
        assert box.value == "x" and app.focused is box


async def test_the_view_has_the_focus_again_when_a_dialog_closes(realistic: Path) -> None:
    """Item 9: the inbox opens while the terminal (or the browser tab) has lost the focus;
    once it is back and esc closes the inbox, the memory list has the focus and its keys
    are in the footer (not the tabs', with the view's keys gone)."""
    from textual import events

    from memevo_tui.core.appstate import AppState, Visit
    from memevo_tui.dialogs.inbox import InboxScreen
    from memevo_tui.term.compat.testing import FooterKey

    AppState(realistic).save_visit(Visit(230, 1_793_361_600_000))  # 2026-10-30 12:00
    app = make_app(realistic)
    async with app.run_test(size=(160, 50)) as pilot:
        app.post_message(events.AppBlur())
        await until(pilot, lambda: isinstance(app.screen, InboxScreen), "the inbox")
        app.post_message(events.AppFocus())
        await settle(pilot)
        await press(pilot, "escape")
        await until(pilot, lambda: app.focused is memory_list(app), "the focus on the list")
        keys = {k.description for k in app.screen.query(FooterKey)}
        assert {"Pin", "Quit", "Help"} <= keys, keys
        await press(pilot, "w")
        assert app.query_one("#tabs").active == "review"  # type: ignore[attr-defined]


async def test_every_views_empty_state_says_what_is_true(realistic: Path) -> None:
    """Item 3: a filter, query or prompt that matches nothing says so, with what there is."""
    from textual.widgets import Input

    from memevo_tui.widgets.event_list import EventList
    from memevo_tui.widgets.recall_list import RecallList
    from memevo_tui.widgets.review_list import ReviewList
    from memevo_tui.widgets.source_list import SourceList

    async with opened(realistic) as (app, pilot):

        async def typed(text: str) -> None:
            await press(pilot, "slash", *text, "enter")

        await typed("zebra crossing")
        assert not memory_list(app).rows
        assert memory_list(app).empty_text == (
            "No memory matches 'zebra crossing' (205 records; esc clears it)."
        )
        await press(pilot, "escape", "h")
        await typed("zebra")
        events = app.query_one(EventList)
        assert not events.rows
        assert events.empty_text.startswith("No event matches 'zebra' (")
        assert events.empty_text.endswith(" events read; esc clears it).")
        await press(pilot, "escape", "l")
        await typed("zebra")
        sources = app.query_one(SourceList)
        assert not sources.rows and sources.empty_text.startswith("No source matches 'zebra' (")
        await press(pilot, "escape", "w")
        await typed("zebra")
        review = app.query_one(ReviewList)
        assert not review.rows and review.empty_text.startswith("No item matches zebra (")
        await press(pilot, "escape", "s")
        await typed("zebra")
        results = app.query_one("#search-results", type(memory_list(app)))
        assert not results.rows
        assert results.empty_text == (
            "No record matches 'zebra' as pi's /memory search reads it, of 205 (i shows why)."
        )
        await press(pilot, "i")
        box = app.query_one("#recall-input", Input)
        box.value = ""
        await press(pilot, "slash", *"zebra", "enter")
        recall = app.query_one(RecallList)
        await until(pilot, lambda: "eligible" in recall.empty_text, "the preview")
        assert not recall.rows
        assert recall.empty_text.startswith("No record shares a word with this prompt (")
