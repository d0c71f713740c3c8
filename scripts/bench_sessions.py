"""How fast a source's place in a big pi session opens (issue 45: under 100 ms on a
200 MB session, from the index kept in the cache directory).

    python scripts/bench_sessions.py [--mb 200] [--quick]

Writes a linear session of that size (every third turn a 20 KB tool output) in a
temporary directory, then times, each as the median of a few runs: a plain read of
the file (the floor for a first open), the first open (the whole file indexed), the
context of a middle entry (3 turns each side) from the kept index, and from the file
as a plain ``json.loads`` of every line would give it (the naive way).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memevo_tui.core.recallcache import SessionIndexCache  # noqa: E402
from store.pi.sessions import read_session, turns_around  # noqa: E402


def write(path: Path, mb: int) -> list[str]:
    ids: list[str] = []
    pad = "x" * 20_000
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"type": "session", "version": 3, "id": "bench", "cwd": "/b",
                            "timestamp": "2026-01-01T00:00:00.000Z"}) + "\n")  # fmt: skip
        parent = None
        i = 0
        while f.tell() < mb << 20:
            eid = f"{i:08x}"
            role = ("user", "assistant", "toolResult")[i % 3]
            text = f"turn {i} " + (pad if role == "toolResult" else "hello")
            f.write(json.dumps({"type": "message", "id": eid, "parentId": parent,
                                "timestamp": "2026-01-01T00:00:00.000Z",
                                "message": {"role": role, "timestamp": 1_700_000_000_000 + i,
                                            "content": [{"type": "text", "text": text}]}})
                    + "\n")  # fmt: skip
            parent = eid
            ids.append(eid)
            i += 1
    return ids


def median_ms(run: Callable[[], object], times: int) -> float:
    took = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        took.append((time.perf_counter() - start) * 1000)
    return statistics.median(took)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="fewer runs of each")
    args = parser.parse_args()
    times = 3 if args.quick else 7
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.jsonl"
        ids = write(path, args.mb)
        middle = ids[len(ids) // 2]
        floor = median_ms(lambda: path.read_bytes(), times)
        naive = median_ms(lambda: [json.loads(x) for x in path.read_bytes().splitlines()], 1)
        first = median_ms(lambda: read_session(path), times)
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        kept = SessionIndexCache()  # the cache directory, as the dashboard keeps it
        read_session(path, kept)
        assert kept.get(path) is not None, "the index was not kept"

        def from_index() -> object:
            s = read_session(path, kept)
            return turns_around(s, middle, 3)

        warm = median_ms(from_index, times)
        print(f"session: {args.mb} MB, {len(ids):,} entries")
        print(f"plain read of the file (floor):        {floor:8.1f} ms")
        print(f"every line json.loads (naive):         {naive:8.1f} ms")
        print(
            f"first open (index built):              {first:8.1f} ms  ({first / floor:.1f}x floor)"
        )
        print(f"entry + 3 turns each side, kept index: {warm:8.1f} ms  "
              f"(goal 100 ms: {'met' if warm <= 100 else 'MISSED'})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
