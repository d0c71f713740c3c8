"""Every dialog fits at 80x24: its list or preview scrolls; its title, summary and
buttons stay on screen. One Pilot test measures each, and one snapshot pins each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_snapshots import then
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import Button

from memevo_tui.core.appstate import AppState, Visit
from memevo_tui.dialogs.dialog import Dialog
from memevo_tui.dialogs.help import HelpScreen
from store import fixed_clock

from apphelpers import make_app, press, settle, snapshot_copy, wait_loaded

SMALL = (80, 24)
MARK_ALL = ["ctrl+a"]
DIALOGS: dict[str, list[str]] = {
    "bulk forget of every listed record": [*MARK_ALL, "d"],
    "bulk pin, three refused among them": ["a", *MARK_ALL, "p"],
    "forget one": ["d"],
    "mark incorrect": ["4"],
    "conflict": ["c", "j", "c"],
    "undo preview": ["p", "h", "u"],
    "batch undo preview": [*MARK_ALL, "p", "y", "h", "u"],
    "correct in the editor": ["e"],
    "export: share or backup": ["ctrl+e"],
    "export: the file": ["ctrl+e", "enter"],
    "time dial": ["t"],
    "sort menu": ["o"],
    "adopt into an origin": ["A"],
    "help": ["question_mark"],
}


def _inside(inner: Region, outer: Region) -> bool:
    return outer.contains_region(inner)


def dialog_app(tmp_path: Path, inbox: bool = False) -> Any:
    path = snapshot_copy("realistic.sqlite", tmp_path)
    if inbox:  # opened before, two days ago, at event 230
        AppState(path).save_visit(Visit(230, fixed_clock("2026-10-30T12:00:00.000Z")()))
    return make_app(path)


def assert_fits(screen: Any, size: tuple[int, int]) -> None:
    whole = Region(0, 0, *size)
    body = next(iter(screen.query(".-body")), None)
    box = body.parent if body is not None else screen.children[0]
    assert _inside(box.region, whole), f"{box!r} at {box.region} is not within {whole}"
    for part in box.children:
        if part.display:
            assert _inside(part.region, box.region), f"{part!r} at {part.region} is cut off"
    for button in screen.query(Button):
        assert _inside(button.region, whole), f"{button.label} at {button.region} is off screen"


@pytest.mark.parametrize("name", [*DIALOGS, "since your last visit"])
async def test_every_dialog_fits_at_80x24(tmp_path: Path, name: str) -> None:
    app = dialog_app(tmp_path, inbox=name == "since your last visit")
    async with app.run_test(size=SMALL) as pilot:
        await wait_loaded(pilot)
        for key in DIALOGS.get(name, []):
            await pilot.press(key)
            await settle(pilot)
        if name == "help":  # one scrolling box, 90% of the screen
            assert isinstance(app.screen, HelpScreen)
            box = app.screen.query_one("#help").region
            assert _inside(box, Region(0, 0, *SMALL)) and box.height < SMALL[1]
        else:
            assert isinstance(app.screen, Dialog), f"{name}: {app.screen!r}"
            assert_fits(app.screen, SMALL)


async def test_a_long_bulk_preview_scrolls_to_its_end_with_its_buttons_in_view(
    tmp_path: Path,
) -> None:
    """ctrl+a then d on every listed record: G (or End) reaches the last line of the list,
    and tab reaches both buttons, all without leaving the screen."""
    app = dialog_app(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await wait_loaded(pilot)
        await pilot.press("ctrl+a", "d")
        await settle(pilot)
        detail = app.screen.query_one("#dialog-detail")
        assert detail.max_scroll_y > 0  # longer than the room it has
        await press(pilot, "G")
        assert detail.scroll_y == detail.max_scroll_y
        await press(pilot, "g")
        assert detail.scroll_y == 0
        await press(pilot, "end")
        assert detail.scroll_y == detail.max_scroll_y
        assert app.focused is not None and app.focused.id == "no"
        await pilot.press("shift+tab")
        assert app.focused is not None and app.focused.id == "yes"
        assert_fits(app.screen, SMALL)


@pytest.mark.parametrize("name", [*DIALOGS, "since your last visit"])
def test_dialog_snapshot_at_80x24(
    snap_compare: Any, tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir("/")  # the export prompt names the current directory
    app = dialog_app(tmp_path, inbox=name == "since your last visit")
    keys = then(*DIALOGS.get(name, []))

    async def run_before(pilot: Pilot[None]) -> None:
        await keys(pilot)
        app.clear_notifications()  # the toasts of the steps before it would hide the dialog
        await settle(pilot)

    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)
