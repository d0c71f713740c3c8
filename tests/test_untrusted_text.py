"""Store text never acts: every notice that quotes a record shows it literally.

A memory's text, id and origin are user and model output. Textual parses a notice's
message as markup unless told not to, so ``[/]`` crashed the dashboard,
``[Next Steps]`` vanished and ``[@click=app.quit]`` became a live link. These tests
run every curation and yank key on every record of the hostile fixture and read the
notices as the screen draws them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.style import Style
from textual.pilot import Pilot

from memevo_tui.app import MemevoApp
from memevo_tui.core.text import one_line, plain_lines
from memevo_tui.dialogs.confirm import ConfirmScreen
from memevo_tui.dialogs.correct import CorrectScreen
from memevo_tui.term.compat.testing import Toast, notifications
from memevo_tui.widgets.memory_list import MemoryList
from store import CorruptRow, Memory, MemoryStore, fixed_clock

from apphelpers import make_app, settle, until, wait_loaded
from conftest import FIXTURE_NOW

HELM = "a100f0dec266627497b0e637"
HELM_MARKUP = "Helm charts live under charts/[/] and are pinned in Chart.lock."


def shown(app: MemevoApp) -> list[str]:
    """The notices on screen, as their toasts draw them, each checked: it shows its
    notice's text literally and visibly, and nothing in it acts (no link, no action).
    The notices are then cleared, so that each check reads only the latest."""
    notices = notifications(app)
    expected = {
        (f"{one_line(n.title)}\n" if n.title else "") + plain_lines(n.message) for n in notices
    }
    toasts = [toast.render() for toast in app.screen.query(Toast)]
    assert len(toasts) == len(notices)
    for content in toasts:
        assert content.plain in expected, content.plain
        assert "\x1b" not in content.plain and "\x07" not in content.plain
        for span in content.spans:
            style = span.style
            meta: object = style.meta if isinstance(style, Style) else None
            assert not meta and "@click" not in str(style) and "link" not in str(style), span
    assert all(not n.markup for n in notices)
    app.clear_notifications()
    return [plain_lines(n.message) for n in notices]


async def notices_after(pilot: Pilot[None], *keys: str) -> list[str]:
    """Press ``keys``, let the dashboard settle, and return the notices they gave."""
    await pilot.press(*keys)
    await settle(pilot)
    assert pilot.app.is_running, f"the app ended after {keys}"
    app = pilot.app
    assert isinstance(app, MemevoApp)
    return shown(app)


async def answer(pilot: Pilot[None], key: str) -> list[str]:
    """Answer the dialog the last key opened (``n`` or ``esc`` cancels it); what the
    dialog and the answer gave."""
    app = pilot.app
    assert isinstance(app, MemevoApp)
    await until(pilot, lambda: isinstance(app.screen, ConfirmScreen | CorrectScreen), "a dialog")
    return shown(app) + await notices_after(pilot, key)


HOSTILE_ROWS = 32
CHUNKS = 8  # the 32 records in eight runs of four, so that the parallel suite spreads them


@pytest.mark.parametrize("chunk", range(CHUNKS))
async def test_every_curation_and_yank_on_every_hostile_record_shows_its_text_literally(
    hostile: Path, chunk: int
) -> None:
    app = make_app(hostile)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await wait_loaded(pilot)
        await notices_after(pilot, "a", "z", "g")  # forgotten and conflicted too; no detail pane
        memory_list = app.query_one("#memory-list", MemoryList)
        assert len(memory_list.rows) == HOSTILE_ROWS
        size = HOSTILE_ROWS // CHUNKS
        first = chunk * size
        if first:
            await notices_after(pilot, *["j"] * first)
        for i in range(first, first + size):
            if i > first:
                await notices_after(pilot, "j")
            row = memory_list.highlighted
            assert row is not None and memory_list.cursor == i
            notices = await notices_after(pilot, "y", "Y")
            assert f"Copied its id: {one_line(row.id, 70)}" in notices
            if isinstance(row, CorruptRow):
                [refused] = await notices_after(pilot, "p")
                assert refused.endswith("is a corrupt row: it is shown, never acted upon")
                continue
            assert f"Copied its text: {one_line(row.content, 70)}" in notices
            await notices_after(pilot, "p")  # pin or unpin, or pi's refusal
            await notices_after(pilot, "r", "c", "escape")  # resolve or refusal; a conflict mark
            for key, reply in (("d", "n"), ("4", "n"), ("e", "escape"), ("u", "y")):
                await pilot.press(key)  # forget, incorrect, correct, undo: each asks first
                await answer(pilot, reply)
            assert memory_list.highlighted is not None
            assert memory_list.highlighted.id == row.id
        assert memory_list.cursor == first + size - 1


async def test_a_bracketed_label_is_copied_and_shown_whole(realistic: Path) -> None:
    app = make_app(realistic)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await notices_after(pilot, "slash", *"ab0a2c2c", "enter")
        row = app.query_one("#memory-list", MemoryList).highlighted
        assert isinstance(row, Memory) and row.content.startswith("[in progress]")
        [copied] = await notices_after(pilot, "Y")
        assert app.clipboard == row.content
        assert copied.startswith("Copied its text: [in progress] Porting the checkout")


async def test_a_correction_with_a_closing_tag_survives_every_notice(realistic: Path) -> None:
    store = await MemoryStore.open(realistic, clock=fixed_clock(FIXTURE_NOW))
    await store.correct(HELM, HELM_MARKUP)
    await store.close()
    app = make_app(realistic)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await notices_after(pilot, "slash", *HELM, "enter")
        [copied] = await notices_after(pilot, "Y")
        assert HELM_MARKUP in copied
        await notices_after(pilot, "i", "slash", *"where do helm charts live", "enter")
        assert app.focused is not None and app.focused.id == "recall-list"
        await pilot.press("4")  # incorrect: asks first
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the dialog")
        await pilot.press("y")
        await until(
            pilot,
            lambda: any(n.title == "Recall preview changed" for n in notifications(app)),
            "the preview's notice",
        )
        await settle(pilot)
        changed = next(n for n in notifications(app) if n.title == "Recall preview changed")
        assert "charts/[/]" in changed.message
        shown(app)
        assert app.is_running


async def test_an_action_link_in_a_record_is_shown_not_run(hostile: Path) -> None:
    app = make_app(hostile)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await notices_after(pilot, "a", "slash", *"click here", "enter")
        row = app.query_one("#memory-list", MemoryList).highlighted
        assert isinstance(row, Memory) and "[@click=app.quit]" in row.content
        await pilot.press("Y")
        await settle(pilot)
        toast = app.screen.query_one(Toast)
        assert "[@click=app.quit]click here[/]" in toast.render().plain
        await pilot.click(toast, offset=(20, 1))  # where "click here" is drawn
        await settle(pilot)
        assert app.is_running


async def test_a_copied_text_is_the_text_as_shown_never_raw_escapes(hostile: Path) -> None:
    """y / Y on a record holding ESC, BEL and an OSC 52 sequence: the clipboard (and
    the OSC 52 the terminal is sent) gets their visible stand-ins."""
    app = make_app(hostile)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await notices_after(pilot, "slash", *"raw-escape", "enter")
        row = app.query_one("#memory-list", MemoryList).highlighted
        assert isinstance(row, Memory) and "\x1b]52" in row.content
        await notices_after(pilot, "Y")
        copied = app.clipboard
        assert copied and not any(c in copied for c in "\x1b\x07\r")
        assert "␛]52;c;" in copied and "BEL" in copied
