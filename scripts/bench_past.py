"""Benchmark: moving the time dial into the past, against a plain read of the events.

Builds (once, cached in the temporary directory) a synthetic store whose every
change is an event: 100,000 records and 300,000 events by default, over 800 days.
Then, in one process:

- the baseline: a plain read of every event row (``SELECT rowid, id, scope, data FROM
  events``, fetched, nothing parsed);
- the first move: the dial from now to before the first event, with no checkpoint
  yet: one pass over every event (the moments of all events are read first), leaving
  the checkpoints (what the dashboard does once, in a worker, when the dial or the
  Timeline first goes to the past);
- moves after it: the dial to 30 moments spread over the last 800 days, in a random
  order, each from the nearest checkpoint (a user turning the dial, or moving a
  cursor along the Timeline).

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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import NOW_MS, build_with_history

from memevo_tui.core.state.past import settle
from store import CorruptRow, Memory, MemoryStore, fixed_clock
from store.js import iso
from store.past import PastLog

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
            p95 = moves[min(len(moves) - 1, int(len(moves) * 0.95))]
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


class Shelf:
    """The walk kept between processes (the dashboard's is a file in its cache
    directory, ``recallcache.PastCache``; here in memory, to time the walk alone)."""

    def __init__(self) -> None:
        self.data: bytes | None = None

    def load(self) -> bytes | None:
        return self.data

    def save(self, data: bytes) -> None:
        self.data = data


def verdict(value: float, goal: float) -> str:
    return "met" if value <= goal else f"MISSED by {value / goal:.1f}x"


if __name__ == "__main__":
    asyncio.run(main())
