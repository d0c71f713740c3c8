"""The secret scan over a large store, against a plain regex pass over the same bytes.

    python scripts/bench_secrets.py [--count 100000] [--events 300000] [--quick]

Builds (once, in a temporary folder) a synthetic store of ``--count`` records and
``--events`` events, plants one AWS key through pi's own correct, then in one process:
reads every row's bytes the scan reads and runs one regex (the AWS detector's) over
them: the floor; then the whole scan (``core.secrets.in_store``: every rule, the rows
decoded where the pretest passes). Prints both, their ratio, and met or MISSED against
the goal (within 2x of the floor). ``--quick``: the same sizes, one run of each.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

AWS = "AKIAQ3EGRTZ7XK2PLM4N"
GOAL = 2.0


async def measure(path: Path, runs: int) -> tuple[float, float, int]:
    from memevo_tui.core.secrets import in_store, rules
    from store import MemoryStore, fixed_clock

    rules()  # detect-secrets' import and the rules' compilation: not the scan's
    store = await MemoryStore.open(
        path, read_only=True, clock=fixed_clock("2026-11-01T12:00:00.000Z")
    )
    try:
        floor = scan = float("inf")
        found = 0
        aws = re.compile(rb"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}")
        for _ in range(runs):
            start = time.perf_counter()
            hits = 0
            for table in ("memories", "events", "sources"):
                for (data,) in await store.query(f"SELECT data FROM {table}"):
                    hits += len(aws.findall(data.encode()))
            floor = min(floor, time.perf_counter() - start)
            start = time.perf_counter()
            found = len(await in_store(store))
            scan = min(scan, time.perf_counter() - start)
        return floor, scan, found
    finally:
        await store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--quick", action="store_true", help="one run of each")
    args = parser.parse_args()
    from synthetic import build_with_history

    from memevo_tui.__main__ import main as cli

    folder = Path(tempfile.mkdtemp(prefix="memevo-bench-secrets-"))
    path = build_with_history(folder / "memory.sqlite", args.count, args.events)
    path.chmod(0o600)
    import sqlite3

    (record,) = sqlite3.connect(path).execute("SELECT id FROM memories LIMIT 1").fetchone()
    assert cli(["correct", record, f"the key is {AWS}", "--db", str(path)]) == 0
    floor, scan, found = asyncio.run(measure(path, 1 if args.quick else 3))
    ratio = scan / floor
    print(f"secret scan, {args.count:,} records and {args.events:,} events: "
          f"{scan:.2f} s; plain regex pass over the same bytes: {floor:.2f} s; "
          f"{ratio:.1f}x (goal <= {GOAL:.0f}x): {'met' if ratio <= GOAL else 'MISSED'}; "
          f"{found} finding(s)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
