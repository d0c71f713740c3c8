"""Running the dashboard: in the terminal, or headless for an install check (``--smoke``).

A store the command-line verbs would refuse is refused here too, in one line and
before the full-screen UI starts; so is a session without a terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

from store import Clock, MemoryStore, StoreError

from .app.app import MemevoApp
from .term import terminal
from .widgets.memory_list import MemoryList

EXIT_CANNOT_RUN = 2
NO_TERMINAL = (
    "memevo-tui: the dashboard needs a terminal on stdin and stdout; for scripts and "
    "pipes use a verb, e.g. `memevo-tui list --json` (see `memevo-tui --help`)"
)


async def probe(path: Path, *, read_only: bool, clock: Clock) -> StoreError | None:
    """Open the store as the dashboard will and check every page; the error, or None."""
    try:
        store = await MemoryStore.open(path, read_only=read_only, clock=clock)
    except StoreError as exc:
        return exc
    try:
        await store.check()
        await store.memory_count()
    except StoreError as exc:
        return exc
    finally:
        await store.close()
    return None


async def _smoke(app: MemevoApp) -> str | None:
    """Run headless until the memories are on screen; a report line, or None on failure."""
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):
            if app.state.loaded or app.state.failure:
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
    served: bool = False,
    sessions: str | None = None,
    scope: str | None = None,
) -> int:
    """Run the dashboard; ``served``: one browser tab's, under Textual's web driver."""
    if not (smoke or served) and not (sys.stdin.isatty() and sys.stdout.isatty()):
        sys.stderr.write(NO_TERMINAL + "\n")
        return EXIT_CANNOT_RUN
    problem = asyncio.run(probe(path, read_only=read_only, clock=clock))
    if problem is not None:
        sys.stderr.write(f"memevo-tui: {problem}\n")
        return EXIT_CANNOT_RUN
    in_terminal = not (smoke or served)
    app = MemevoApp(
        path,
        read_only=read_only,
        clock=clock,
        label=label,
        live_demo=live_demo,
        handle_signals=not smoke,
        remember=label is None,  # the demo's temporary store leaves nothing behind
        driver_class=terminal.driver() if in_terminal else None,
    )
    if sessions is not None:
        app.state.use_sessions(sessions)
    app.state.scope_asked = os.path.abspath(os.path.expanduser(scope)) if scope else scope
    if smoke:
        report = asyncio.run(_smoke(app))
        if report is None:
            sys.stderr.write("memevo-tui: smoke run failed: the memories never loaded\n")
            return 1
        print(report)
        return 0
    if served:  # a tab's dashboard ends with its server, even one killed with -9
        from store import die_with_parent

        die_with_parent(signal.SIGTERM)
    try:
        app.run()
    finally:
        _close_left_open(app)
    return app.return_code or 0


def _close_left_open(app: MemevoApp) -> None:
    """The store, if the app left without closing it (its unmount never ran: a tab whose
    server died, say). Its connection's thread would otherwise keep the process alive."""
    if app.state.store is None:
        return
    with contextlib.suppress(Exception):
        asyncio.run(asyncio.wait_for(app.state.close(), 5))
