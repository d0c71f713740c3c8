"""Benchmark: the store layer's full load against a raw read of the same rows.

Prints, for a synthetic valid store (100,000 memories by default): the time of
a raw ``SELECT data FROM memories`` plus ``json.loads`` of every row (the
baseline), the time of ``MemoryStore.load_memories()`` (validation, typed
records and quality for every row), their ratio (goal, issue 16: at most 2x), and the
peak Python memory of each. Times are the best of several runs, in one process.

    python scripts/bench_store.py [--count N] [--repeat R]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sqlite3
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import NOW_MS, build_synthetic

from store import MemoryStore


def raw_load(path: Path) -> int:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute("SELECT data FROM memories").fetchall()
    parsed = [json.loads(r[0]) for r in rows]
    con.close()
    return len(parsed)


def store_load(path: Path) -> int:
    async def run() -> int:
        async with await MemoryStore.open(path, read_only=True, clock=lambda: NOW_MS) as store:
            load = await store.load_memories()
        return len(load.memories) + len(load.corrupt)

    return asyncio.run(run())


def best_time(fn: Callable[[Path], int], path: Path, repeat: int) -> tuple[float, int]:
    best = float("inf")
    n = 0
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        n = fn(path)
        best = min(best, time.perf_counter() - start)
    return best, n


def peak_memory(fn: Callable[[Path], int], path: Path) -> float:
    gc.collect()
    tracemalloc.start()
    fn(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "synthetic.sqlite"
        start = time.perf_counter()
        build_synthetic(path, args.count)
        print(f"built {args.count:,} memories in {time.perf_counter() - start:.1f} s "
              f"({path.stat().st_size / 1e6:.1f} MB)")  # fmt: skip
        raw_s, raw_n = best_time(raw_load, path, args.repeat)
        store_s, store_n = best_time(store_load, path, args.repeat)
        assert raw_n == store_n, (raw_n, store_n)
        raw_mb = peak_memory(raw_load, path)
        store_mb = peak_memory(store_load, path)
    print(
        f"raw SELECT + json.loads : {raw_s * 1000:8.0f} ms  peak {raw_mb:7.1f} MB  ({raw_n:,} rows)"
    )
    print(f"store full load+quality : {store_s * 1000:8.0f} ms  peak {store_mb:7.1f} MB")
    ratio = store_s / raw_s
    verdict = "met" if ratio <= 2 else f"MISSED by {ratio / 2:.1f}x"
    print(f"ratio store/raw         : {ratio:8.2f}x  (goal <= 2x: {verdict})")


if __name__ == "__main__":
    main()
