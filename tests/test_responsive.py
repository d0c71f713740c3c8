"""What keeps the dashboard responsive on a big store: a footer rebuilt only when its
keys change, a detail pane drawn once per record, a load that hands the event loop
back every few milliseconds, and the store opened while the dashboard is built."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.strip import Strip

import store.reads.records
from memevo_tui.core.state import DashboardState, idle
from memevo_tui.term.compat.testing import FooterKey
from memevo_tui.widgets.app_footer import AppFooter
from memevo_tui.widgets.memory_detail import EventRow, MemoryDetail
from store import Memory, MemoryLoad, MemoryStore, StoreError

from apphelpers import DURABLE, opened, press, select, settle, stored, until


def footer_keys(footer: AppFooter) -> list[FooterKey]:
    return list(footer.query(FooterKey))


async def test_the_footer_is_rebuilt_only_when_its_keys_change(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        footer = app.screen.query_one(AppFooter)
        before = footer_keys(footer)
        assert before
        await footer.recompose()  # what each focus move asks for, with the same keys
        assert footer_keys(footer) == before  # the same widgets: nothing was rebuilt
        await pilot.press("h")  # the history view: other keys
        await settle(pilot)
        after = footer_keys(footer)
        assert not set(after) & set(before)
        shown = {
            binding.description
            for _, binding, _, _ in app.screen.active_bindings.values()
            if binding.show
        }
        assert {k.description for k in after if not k.has_class("-command-palette")} == shown


class PaneApp(App[None]):
    def __init__(self, load_events: Callable[[str], object]) -> None:
        super().__init__()
        self.load_events = load_events

    def compose(self) -> ComposeResult:
        yield MemoryDetail(load_events=self.load_events)  # type: ignore[arg-type]


async def record_with_events(
    path: Path, clock: Callable[[], float]
) -> tuple[Memory, list[EventRow]]:
    async with await MemoryStore.open(path, clock=clock) as s:
        load = await s.load_memories()
        for memory in load.memories:
            events = list(await s.events(memory_id=memory.id, limit=50))
            if events:
                return memory, events
    raise AssertionError("no record with events in the fixture")


async def test_the_detail_pane_shows_a_record_and_its_events_in_one_redraw(
    realistic: Path, fixture_clock: Callable[[], float], monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, events = await record_with_events(realistic, fixture_clock)
    monkeypatch.setattr(MemoryDetail, "EVENTS_WAIT", 3600.0)  # never the record alone
    shows: list[int] = []

    async def load_events(memory_id: str) -> Sequence[EventRow]:
        await asyncio.sleep(0.05)  # a store that takes a moment (long enough for a paint)
        return events

    app = PaneApp(load_events)
    async with app.run_test() as pilot:
        pane = app.query_one(MemoryDetail)
        original = pane.show

        def show(row: Memory | None) -> None:
            shows.append(1)
            original(row)

        pane.show = show  # type: ignore[method-assign,assignment]
        painted_alone: list[bool] = []
        render_lines = pane.render_lines

        def paint(crop: Region) -> list[Strip]:
            if pane.shown is memory:
                painted_alone.append(pane.events_for != memory.id)
            return render_lines(crop)

        pane.render_lines = paint  # type: ignore[method-assign]
        pane.follow(memory)
        await until(pilot, lambda: pane.caught_up_with(memory), "the pane to catch up")
        await until(pilot, lambda: painted_alone, "the pane to be painted")
        assert len(shows) == 1
        assert not any(painted_alone)  # never on screen without its events
        assert "History (" in pane.plain
        assert " ".join(memory.content[:30].split()) in " ".join(pane.plain.split())


async def test_slow_events_leave_the_record_shown_until_they_come(
    realistic: Path, fixture_clock: Callable[[], float]
) -> None:
    memory, events = await record_with_events(realistic, fixture_clock)
    release = asyncio.Event()

    async def load_events(memory_id: str) -> Sequence[EventRow]:
        await release.wait()
        return events

    app = PaneApp(load_events)
    async with app.run_test() as pilot:
        pane = app.query_one(MemoryDetail)
        pane.follow(memory)
        await until(pilot, lambda: pane.shown is memory, "the record without its events")
        assert "History (" not in pane.plain
        assert not pane.caught_up_with(memory)
        release.set()
        await until(pilot, lambda: pane.caught_up_with(memory), "its events")
        assert "History (" in pane.plain


async def test_a_load_hands_the_loop_back_between_short_parses(
    realistic: Path, fixture_clock: Callable[[], float], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store.reads.records, "SLICE_SECONDS", 0.0)  # every look at the clock: late
    turns = 0

    async def between() -> None:
        nonlocal turns
        turns += 1

    async with await MemoryStore.open(realistic, clock=fixture_clock) as s:
        whole = await s.load_memories()
        sliced = await s.load_memories(yield_every=120, between=between)
    assert [repr(m) for m in sliced.memories] == [repr(m) for m in whole.memories]
    assert [repr(c) for c in sliced.corrupt] == [repr(c) for c in whole.corrupt]
    rows = len(whole.memories) + len(whole.corrupt)
    assert turns >= rows // 50  # 50 rows between looks at the clock, then a turn


async def test_idle_returns_once_the_loop_has_run_what_was_ready() -> None:
    done: list[int] = []
    loop = asyncio.get_running_loop()

    def hop(n: int) -> None:
        done.append(n)
        if n < 10:
            loop.call_soon(hop, n + 1)

    loop.call_soon(hop, 1)
    await idle()
    assert done == list(range(1, 11))


async def test_the_first_read_takes_over_the_prefetched_store(
    realistic: Path, fixture_clock: Callable[[], float]
) -> None:
    state = DashboardState(realistic, clock=fixture_clock, remember=False)
    await state.prefetch()
    opened = state.store
    assert opened is not None

    async def first_page(load: MemoryLoad[Memory], total: int) -> None:
        raise AssertionError("a small store has no first page")

    load, _ = await state.read(first_page)
    assert state.store is opened  # opened once
    assert len(load.memories) + len(load.corrupt) == 205
    counted: list[int] = []
    count = opened.memory_count

    async def memory_count() -> int:
        counted.append(1)
        return await count()

    opened.memory_count = memory_count  # type: ignore[method-assign]
    await state.prefetch()  # late, after the read: nothing to read ahead
    assert not counted
    await state.read(first_page)  # a reload reads afresh
    assert len(counted) == 1
    await state.close()


async def test_closing_during_the_prefetch_leaves_no_store_open(
    realistic: Path, fixture_clock: Callable[[], float]
) -> None:
    state = DashboardState(realistic, clock=fixture_clock, remember=False)
    prefetch = asyncio.ensure_future(state.prefetch())
    await asyncio.sleep(0)  # it has started opening
    await state.close()
    assert state.store is None
    await prefetch


async def test_a_prefetch_that_fails_leaves_the_failure_to_the_read(tmp_path: Path) -> None:
    state = DashboardState(tmp_path / "missing.sqlite", remember=False)
    await state.prefetch()  # says nothing

    async def first_page(load: MemoryLoad[Memory], total: int) -> None:
        raise AssertionError("nothing to show")

    with pytest.raises(StoreError):
        await state.read(first_page)
    await state.close()


class Node:
    """An object in a reference cycle: garbage only the cycle collector frees."""

    other: Node | None = None


async def test_garbage_alive_at_a_recall_index_update_is_still_collected(
    realistic: Path,
) -> None:
    """Updating the recall index after a write freezes nothing: ``gc.freeze`` there made
    every cycle not yet collected at that moment permanent."""
    async with opened(realistic) as (app, pilot):
        assert await app.state.recall_index() is not None  # built once
        await select(pilot, DURABLE)
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b  # garbage now, in a cycle, that no automatic collection reaches first:
        gc.disable()
        try:
            await press(pilot, "p")
            assert stored(realistic, DURABLE)["layer"] == "pinned"
            assert app.state.recalling.changed  # the write changed a row the index has not seen
            await app.state.recall_index()  # the update applies it
            assert not app.state.recalling.changed
        finally:
            gc.enable()
        gc.collect()
        assert gone() is None
