"""Pilot tests of the recall preview: real key presses, results checked against the store."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static, TabbedContent

from memevo_tui.term.compat.testing import notifications
from memevo_tui.widgets.memory_list import MemoryList
from memevo_tui.widgets.recall_list import RecallList
from memevo_tui.widgets.recall_pane import RecallPane

from apphelpers import Notes, make_app, opened, press, settle, stored, wait_loaded

INJECTED = ["cd4d49e9d57a843430ffb194", "93f3ef48151edcce79f0a56e"]
DORMANT = ["1ffdd011bb1a1e51f647de06", "39cc5ce9ca3d2186c8abb5da"]


def shown(app: object) -> list[tuple[str, str | None]]:
    rows = app.query_one(RecallList).rows  # type: ignore[attr-defined]
    return [(c.memory.id, c.reason) for c in rows]


def text_of(app: object, selector: str) -> str:
    return str(app.query_one(selector, Static).render())  # type: ignore[attr-defined]


async def test_preview_lists_injected_then_left_out_with_reasons(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await pilot.press("i", "slash", *"kyverno")
        await settle(pilot)
        assert app.query_one("#tabs", TabbedContent).active == "recall"
        assert shown(app) == [
            (INJECTED[0], None),
            (INJECTED[1], None),
            (DORMANT[0], "dormant"),
            (DORMANT[1], "dormant"),
        ]
        assert "2 selected of 3" in text_of(app, "#recall-summary")
        assert "plan direct (the prompt alone) · words: kyverno" in text_of(app, "#recall-summary")
        await pilot.press("enter", "j", "j")
        await settle(pilot)
        explanation = text_of(app, "#recall-explain")
        assert "Left out: dormant" in explanation and "Pin it (p)" in explanation
        assert "score 4." in explanation and "× quality 0.5" in explanation

        await pilot.press("ctrl+t")  # the model's memory_recall tool: dormant included, 3
        await settle(pilot)
        assert [i for i, reason in shown(app) if reason is None] == [*INJECTED, *DORMANT][:3]
        assert "tool:" in text_of(app, "#recall-summary")
        await pilot.press("ctrl+t")  # /memory search: dormant records included
        await settle(pilot)
        assert [i for i, reason in shown(app) if reason is None] == [*INJECTED, *DORMANT]
        assert "search:" in text_of(app, "#recall-summary")


async def test_jump_to_a_left_out_record_pin_it_and_see_the_preview_change(
    realistic: Path,
) -> None:
    async with opened(realistic) as (app, pilot):
        notes = Notes(app)
        await pilot.press("slash", *"zzz-no-such-record", "enter")  # a filter hiding it
        await settle(pilot)
        await pilot.press("i", "slash", *"kyverno", "enter")
        await settle(pilot)
        await pilot.press("j", "j", "enter")  # the first dormant record
        await settle(pilot)
        assert app.query_one("#tabs", TabbedContent).active == "memories"
        memories = app.query_one("#memory-list", MemoryList)
        assert memories.highlighted is not None and memories.highlighted.id == DORMANT[0]
        assert memories.has_focus

        await press(pilot, "p")
        assert stored(realistic, DORMANT[0])["layer"] == "pinned"
        pane = app.query_one(RecallPane)
        assert pane.result is not None
        assert DORMANT[0] in [c.memory.id for c in pane.result.selected]
        text = stored(realistic, DORMANT[0])["content"][:30]
        assert any(
            text in n and "now injected, was left out (dormant)" in n for n, _ in notes.items
        )

        await press(pilot, "i")
        assert app.query_one("#tabs", TabbedContent).active == "recall"
        assert (DORMANT[0], None) in shown(app)


async def test_preview_on_the_hostile_store_stays_plain_text(hostile: Path) -> None:
    app = make_app(hostile)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("i", "slash", *"[bold red]x[/] \\x1b[31m markup", "enter")
        await settle(pilot)
        pane = app.query_one(RecallPane)
        assert pane.result is not None
        for row in app.query_one(RecallList).rows:
            line = app.query_one(RecallList).cells(row)["content"]
            assert "\x1b" not in line
        assert "\x1b" not in text_of(app, "#recall-explain")


async def test_from_search_the_preview_explains_that_search(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await pilot.press("s", "slash", *"kyverno", "enter")
        await settle(pilot)
        results = app.query_one("#search-results", MemoryList)
        assert [r.id for r in results.rows] == [*INJECTED, *DORMANT]
        await press(pilot, "i")
        pane = app.query_one(RecallPane)
        assert pane.purpose == "search" and pane.prompt == "kyverno"
        assert [i for i, reason in shown(app) if reason is None] == [*INJECTED, *DORMANT]


async def test_earlier_turns_make_a_follow_up(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await pilot.press("i", "slash", *"what about its port?")
        await settle(pilot)
        alone = [i for i, reason in shown(app) if reason is None]
        assert len(alone) == 3  # any port record will do without a subject

        await pilot.press("ctrl+a", "ctrl+k", *"dev postgres", "ctrl+n", *"what about its port?")
        await settle(pilot)
        pane = app.query_one(RecallPane)
        assert pane.turns == ["dev postgres"]
        assert pane.result is not None and pane.result.plan.mode == "followup"
        summary = text_of(app, "#recall-summary")
        assert "earlier turns (1" in summary and "context: dev, postgres" in summary
        assert [i for i, reason in shown(app) if reason is None] == []
        assert {reason for i, reason in shown(app) if i in alone} == {"context-mismatch"}

        await press(pilot, "ctrl+l")
        assert pane.turns == [] and [i for i, r in shown(app) if r is None] == alone


async def test_the_preview_follows_the_dial_without_a_toast_and_never_toasts_elsewhere(
    realistic: Path,
) -> None:
    from apphelpers import until

    app = make_app(realistic)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await press(pilot, "i", "slash", *"which port does the api dev server listen on", "enter")
        pane = app.screen.query_one(RecallPane)
        await until(pilot, lambda: pane.result is not None, "the preview")
        await press(pilot, "m", "t", *"2025-01-01", "enter")
        await until(pilot, lambda: app.state.as_of is not None, "the dial")
        await press(pilot, "t", *"2024-10-01", "enter")
        await until(pilot, lambda: app.state.as_of == 1727740800000, "the dial again")
        await press(pilot, "i", "escape")  # out of the prompt box: 0 is the dial's key
        await settle(pilot)
        await press(pilot, "0")
        await until(pilot, lambda: app.state.as_of is None, "back to now")
        await settle(pilot)
        assert not any(n.title == "Recall preview changed" for n in notifications(app))
