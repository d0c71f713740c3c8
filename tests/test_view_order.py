"""The memory list's order: by the sort's key, ties by id, as two stable sorts give it
(by id, then by key), however the one sort and the runs of ties are done."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from memevo_tui.core.view import SORTS, View, order_view, sort_key
from store import Memory, MemoryStore, fixed_clock

from conftest import FIXTURE_NOW


def reference(rows: list[Memory], view: View) -> list[str]:
    key = sort_key(view.sort)
    shown = sorted(rows, key=lambda m: m.id)
    shown.sort(key=key, reverse=view.descending)
    return [m.id for m in shown]


@pytest.mark.parametrize("descending", [False, True])
async def test_every_sort_orders_as_two_stable_sorts_do(realistic: Path, descending: bool) -> None:
    store = await MemoryStore.open(realistic, read_only=True, clock=fixed_clock(FIXTURE_NOW))
    try:
        memories = list((await store.load_memories()).memories)
    finally:
        await store.close()
    rng = random.Random(9)
    # many ties: copies of records under other ids, in a shuffled order
    rows = [*memories, *(replace(rng.choice(memories), id=f"{i:024x}") for i in range(300))]
    rng.shuffle(rows)
    for sort in SORTS:
        view = View(sort=sort, descending=descending, show_hidden=True)
        listed, _, _ = order_view(rows, view)
        assert [m.id for m in listed] == reference(rows, view), sort
