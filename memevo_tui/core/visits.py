"""What the dashboard works out when it opens a store it has shown before, with no
Textual: the bulk actions a killed process left journaled, completed from the events
table, and what changed since the last visit. The app says the answers (``app.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from store import StoreError

from .appstate import reconcile
from .inbox import Line, diff_line, summarize
from .state import DashboardState


async def settle_journal(state: DashboardState) -> tuple[str | None, list[str]]:
    """Complete each bulk action a killed process left journaled, with the events the
    events table shows it wrote: (why the state directory cannot be used, or None; a
    line for each bulk action completed). The history's grouping is told of them."""
    remembered, store = state.remembered, state.store
    if remembered is None or store is None:
        return None, []
    problem = await asyncio.to_thread(remembered.check)
    if problem is not None:
        return problem, []
    lines = []
    for pending in await asyncio.to_thread(remembered.pending):
        try:
            events = await store.events(limit=None, after_rowid=pending.after_rowid)
        except StoreError:
            break
        written = reconcile(pending, events)
        await asyncio.to_thread(remembered.finish_batch, pending.id, written, cut_short=True)
        lines.append(
            f"A bulk {pending.verb} of {len(pending.targets)} records ({pending.at[:16]}) "
            f"was cut short: {len(written)} written"
        )
    if lines:
        state.regrouped()
    return None, lines


async def since_last_visit(state: DashboardState) -> tuple[str, Sequence[Line]] | None:
    """What changed since the last visit, if this store was shown before (None: not
    shown before, or nothing to say)."""
    visit = state.remembered.visit() if state.remembered is not None else None
    store = state.store
    if visit is None or store is None:
        return None
    try:
        events = await store.events(limit=None, after_rowid=visit.rowid)
        sources = await store.sources()
    except StoreError:
        return None
    # 0.3 s at 100,000 records: on a thread, so the keys stay live meanwhile
    rows = tuple(state.rows)
    heading, lines = await asyncio.to_thread(summarize, visit, events, rows, sources)
    try:
        changed = diff_line(visit, await state.diff(visit.at_ms, start_rowid=visit.rowid))
    except StoreError:  # older than the log gives exactly: the other lines still hold
        changed = None
    if changed is not None:
        lines = [changed, *lines]
    return (heading, lines) if lines else None
