"""The record menu: ``enter`` (or ``.``) on a record lists what can be done to it, from
the registries, and each line does what its key or view does. Real keys, the store
checked."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual.widgets import OptionList

from memevo_tui.app.record_menu import record_choices
from memevo_tui.core.verbs import KEYED
from memevo_tui.dialogs.menu import Menu
from memevo_tui.views.history import HistoryView
from memevo_tui.widgets.memory_list import MemoryList
from memevo_tui.widgets.review_list import ReviewList
from store import Memory

from apphelpers import DURABLE, make_app, opened, press, select, settle, stored, until, wait_loaded

EVERY_KEY = {v.binding_id for v in KEYED} | {"list.copy", "list.copy_text"}


def lines(app: object) -> list[str]:
    options = app.screen.query_one(OptionList)  # type: ignore[attr-defined]
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def pick(pilot: object, starting: str) -> None:
    """Move to the line that starts with ``starting`` with j, and press enter."""
    app = pilot.app  # type: ignore[attr-defined]
    index = next(n for n, line in enumerate(lines(app)) if line.startswith(starting))
    await press(pilot, *(["j"] * index), "enter")  # type: ignore[arg-type]


def test_the_menu_offers_what_applies_to_the_record_with_its_key(realistic: Path) -> None:
    from test_merge import records

    (record,) = records(realistic, DURABLE)
    assert isinstance(record, Memory) and record.active and not record.pinned
    choices = dict(record_choices(record, EVERY_KEY, lambda binding: binding[1]))
    said = list(choices.values())
    assert said[0].startswith("Where it came from") and said[0].endswith("P")
    assert choices["view:history"].startswith("Its history")
    assert choices["view:turns"].startswith("Its turns")
    assert choices["verb:pin"].split() == ["Pin", "p"]
    assert choices["verb:forget"].split() == ["Forget", "d"]
    assert "verb:resolve" not in choices  # not conflicted: upstream refuses it
    assert "verb:adopt" not in choices  # not an unscoped legacy record
    assert "verb:merge" not in choices  # it takes several records
    assert choices["copy:id"].split()[-1] == "y" and choices["copy:text"].split()[-1] == "Y"
    pinned = dict(record_choices(replace(record, layer="pinned"), EVERY_KEY,
                                 lambda binding: binding[1]))  # fmt: skip
    assert pinned["verb:pin"].split() == ["Unpin", "p"]
    # a verb is offered where its key works: the recall preview has no forget
    assert "verb:forget" not in dict(record_choices(record, EVERY_KEY - {"memory.forget"},
                                                    lambda binding: binding[1]))  # fmt: skip


async def test_enter_on_a_record_opens_its_menu_and_a_line_does_what_it_says(
    realistic: Path,
) -> None:
    app = make_app(realistic)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await select(pilot, DURABLE)
        await press(pilot, "enter")
        assert isinstance(app.screen, Menu)
        assert any(line.startswith("Pin") for line in lines(app))
        await pick(pilot, "Pin")
        await until(pilot, lambda: stored(realistic, DURABLE)["layer"] == "pinned", "the pin")
        await press(pilot, "full_stop")
        assert isinstance(app.screen, Menu)
        assert any(line.startswith("Unpin") for line in lines(app))
        await pick(pilot, "Its history")
        await until(pilot, lambda: isinstance(app.screen.focused, object)
                    and app.query_one(HistoryView).display, "History")  # fmt: skip
        history = app.query_one(HistoryView)
        assert history.filter_query.words == (DURABLE.casefold(),)
        await press(pilot, "m")
        await press(pilot, "enter")
        await press(pilot, "escape")  # esc closes the menu, nothing done
        assert not isinstance(app.screen, Menu)
        assert app.query_one(MemoryList).has_focus


async def test_the_review_queue_and_the_recall_preview_open_it_with_a_dot(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await press(pilot, "w")
        review = app.query_one(ReviewList)
        await until(pilot, lambda: bool(review.rows), "the review queue")
        await press(pilot, "full_stop")
        assert isinstance(app.screen, Menu)
        item = review.highlighted
        assert item is not None and item.records[0].id[:8] in str(app.screen.title_text)
        await press(pilot, "escape")
        await settle(pilot)
