"""Running the dashboard: in the terminal, or headless for an install check (``--smoke``)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from store import Clock

from .app import MemevoApp
from .widgets.memory_list import MemoryList


async def _smoke(app: MemevoApp) -> str | None:
    """Run headless until the memories are on screen; a report line, or None on failure."""
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):
            if app.state.loaded:
                break
            await pilot.pause(0.05)
        if not app.state.loaded:
            return None
        shown = len(app.query_one("#memory-list", MemoryList).rows)
        corrupt = app.state.corrupt
        await pilot.press("q")
    return f"memevo-tui: smoke run ok: {shown} rows shown ({corrupt} corrupt)"


def run_app(
    path: Path,
    *,
    read_only: bool,
    clock: Clock,
    smoke: bool = False,
    label: str | None = None,
    live_demo: bool = False,
) -> int:
    app = MemevoApp(path, read_only=read_only, clock=clock, label=label, live_demo=live_demo)
    if smoke:
        report = asyncio.run(_smoke(app))
        if report is None:
            sys.stderr.write("memevo-tui: smoke run failed: the memories never loaded\n")
            return 1
        print(report)
        return 0
    app.run()
    return 0
