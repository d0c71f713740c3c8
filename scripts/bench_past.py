"""Benchmark: moving the time dial into the past, against a plain read of the events.

Builds (once, cached in the temporary directory) a synthetic store whose every
change is an event: 100,000 records and 300,000 events by default, over 800 days.
Then, in one process:

- the baseline: a plain read of every event row (``SELECT rowid, id, scope, data FROM
  events``, fetched, nothing parsed);
- the first move: the dial from now to before the first event, nothing walked yet:
  one pass over every event (the moments of all events are read first), keeping every
  change (what the dashboard does once, in a worker, when the dial or the Timeline
  first goes to the past);
- moves after it: the dial to 30 moments spread over the last 800 days, in a random
  order, each a selection over the changes kept (a user turning the dial, or moving a
  cursor along the Timeline);
- a later process: the same, with the first process's walk kept (as the cache
  directory keeps it);
- the same moves in the dashboard itself (headless): the CPU from the dial to the
  memory list redrawn.

Each is printed in milliseconds and as a ratio to the baseline, with issue 49's goals at
100,000 records and 300,000 events: the first move at most 1 s, later moves' p95 at most
100 ms (met or MISSED).

    python scripts/bench_past.py [--count N] [--events E] [--moves M] [--quick]

``--quick``: 10 later moves (the store as by default; built once, then reused).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import NOW_MS, build_with_history

from memevo_tui.core.state.past import settle
from store import CorruptRow, Memory, MemoryStore, fixed_clock
from store.js import iso
from store.past.past import PastLog

DAY = 86_400_000


def plain_read(path: Path) -> float:
    start = time.perf_counter()
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute("SELECT rowid, id, scope, data FROM events ORDER BY rowid DESC").fetchall()
    con.close()
    assert rows
    return (time.perf_counter() - start) * 1000


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--moves", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="10 later moves")
    args = parser.parse_args()
    if args.quick:
        args.moves = 10
    path = Path(tempfile.gettempdir()) / f"memevo-past-{args.count}-{args.events}.sqlite"
    if not path.exists():
        print(f"building {path} ...", file=sys.stderr)
        partial = path.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        build_with_history(partial, args.count, args.events)
        partial.rename(path)
    store = await MemoryStore.open(path, read_only=True, clock=fixed_clock(iso(NOW_MS)))
    try:
        load = await store.load_memories()
        rows: list[Memory | CorruptRow] = [*load.corrupt, *load.memories]
        top = await store.last_event_rowid()
        baseline = statistics.median(plain_read(path) for _ in range(3))
        rng = random.Random(3)
        moments = [NOW_MS - rng.uniform(0, 800) * DAY for _ in range(args.moves)]
        shelf = Shelf()
        print(f"store: {len(rows):,} records, {top:,} events ({path.name})")
        print(f"baseline, a plain read of every event:     {baseline:8.0f} ms")
        for label in ("a first process (nothing kept)", "a later process (the walk kept)"):
            log = PastLog(store, after_walk=settle, keep=shelf)  # as the dashboard's
            start = time.perf_counter()
            first = await log.at(0, rows, top)
            first_ms = (time.perf_counter() - start) * 1000
            moves: list[float] = []
            for when in moments:
                start = time.perf_counter()
                await log.at(when, rows, top)
                moves.append((time.perf_counter() - start) * 1000)
            moves.sort()
            p95 = percentile95(moves)
            print(f"{label}:")
            print(f"  first move, now to the start ({first.undone:,} undone): "
                  f"{first_ms:8.0f} ms  {first_ms / baseline:5.2f}x (goal <= 1000 ms: "
                  f"{verdict(first_ms, 1000)})")  # fmt: skip
            print(f"  later moves ({len(moves)}): median {statistics.median(moves):.0f} ms "
                  f"({statistics.median(moves) / baseline:.2f}x), p95 {p95:.0f} ms "
                  f"({p95 / baseline:.2f}x), max {moves[-1]:.0f} ms "
                  f"(goal p95 <= 100 ms: {verdict(p95, 100)})")  # fmt: skip
        print(f"kept walk: {len(shelf.data or b''):,} bytes")
    finally:
        await store.close()
    drawn = await dashboard_moves(path, moments)
    drawn.sort()
    p95 = percentile95(drawn)
    print("in the dashboard (headless, 160x50), the same moves from the dial to the list "
          f"redrawn, CPU: median {statistics.median(drawn):.0f} ms, p95 {p95:.0f} ms "
          f"({', '.join(f'{t:.0f}' for t in drawn)})")  # fmt: skip


async def dashboard_moves(path: Path, moments: list[float]) -> list[float]:
    """The dial turned in the dashboard itself, after its first walk: the CPU each move
    takes, from the worker's start to the memory list redrawn (milliseconds; the wall
    time would count the test pilot's own waits for the screen to settle)."""
    import os

    from memevo_tui.app import MemevoApp
    from memevo_tui.views.dial import dial_past

    with tempfile.TemporaryDirectory() as tmp:  # its own state: nothing kept, no visit
        os.environ["XDG_STATE_HOME"] = str(Path(tmp) / "state")
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        app = MemevoApp(path, read_only=True, clock=lambda: NOW_MS, keymap={})
        took: list[float] = []
        async with app.run_test(size=(160, 50)) as pilot:
            while not app.state.loaded:
                await asyncio.sleep(0.05)
            await pilot.pause()
            dashboard: Any = app.screen
            await dial_past(dashboard, 1.0)  # the first walk, not timed here
            await pilot.pause()
            for when in moments:
                start = time.process_time()  # CPU: the pilot's pause also waits idle
                await dial_past(dashboard, when)
                await pilot.pause()
                took.append((time.process_time() - start) * 1000)
        return took


class Shelf:
    """The walk kept between processes (the dashboard's is a file in its cache
    directory, ``recallcache.PastCache``; here in memory, to time the walk alone)."""

    def __init__(self) -> None:
        self.data: bytes | None = None

    def load(self) -> bytes | None:
        return self.data

    def save(self, data: bytes) -> None:
        self.data = data


def percentile95(ordered: list[float]) -> float:
    """The 95th percentile of ``ordered`` (sorted): with 10 moves, the largest."""
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def verdict(value: float, goal: float) -> str:
    return "met" if value <= goal else f"MISSED by {value / goal:.1f}x"


if __name__ == "__main__":
    asyncio.run(main())
