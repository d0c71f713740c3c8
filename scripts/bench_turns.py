"""How fast every past prompt is replayed (issue 47: at 10,000 records, 30,000 events
and 1,000 prompts over a year, a cold replay within 30 s and a warm open within 0.5 s).

    python scripts/bench_turns.py [--records N] [--events N] [--prompts N] [--quick]

Builds a synthetic store whose every change is an event (``build_with_history``) and
pi session files with that many prompts, spread over the store's last year, 20 to a
session, in the store's eight projects. Times, in one process:

- the floor: one plain recall per prompt on today's store (one index, N recalls);
- a cold replay: every prompt on the store as it was then, and as it is now;
- a warm replay: the same again, its answers read from the cache directory;
- a warm open of the Turns view (``load_turns``, the session files' index cached):
  the time until its rows can be drawn (the last replay's answers, given first),
  and until the replay has checked them against the store now.

Prints each figure and its ratio to the floor, and the warm open's against 0.5 s.
``--quick``: 2,000 records, 6,000 events, 200 prompts (well under a minute).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

from synthetic import NOW_MS, WORDS, build_with_history  # noqa: E402

from store import MemoryStore, fixed_clock  # noqa: E402
from store.js import iso  # noqa: E402
from store.pi.prompts import session_files, session_prompts  # noqa: E402
from store.pi.turns import replay_turns  # noqa: E402

DAY = 86_400_000


def write_sessions(root: Path, prompts: int, seed: int = 5) -> None:
    """``prompts`` user prompts with replies, 20 to a session, over the last year."""
    rng = random.Random(seed)
    start = NOW_MS - 365 * DAY
    made = 0
    n = 0
    while made < prompts:
        project = f"/home/dev/projects/p{n % 8}"
        folder = root / ("--" + project.lstrip("/").replace("/", "-") + "--")
        folder.mkdir(parents=True, exist_ok=True)
        at = start + int((made / prompts) * 360 * DAY) + rng.randint(0, DAY)
        sid = f"{n:08x}-0000-4000-8000-{n:012x}"
        lines: list[dict[str, object]] = [
            {"type": "session", "version": 3, "id": sid, "timestamp": iso(at), "cwd": project}
        ]
        parent = None
        for k in range(min(20, prompts - made)):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))
            text = rng.choice(("what is the {}?", "{}", "and the {}?", "fix the {} please"))
            moment = at + k * 60_000
            uid, aid = f"u{n:03x}{k:04x}", f"a{n:03x}{k:04x}"
            said = [{"type": "text", "text": text.format(words)}]
            lines.append({"type": "message", "id": uid, "parentId": parent,
                          "timestamp": iso(moment),
                          "message": {"role": "user", "timestamp": moment,
                                      "content": said}})  # fmt: skip
            lines.append({"type": "message", "id": aid, "parentId": uid,
                          "timestamp": iso(moment + 1000),
                          "message": {"role": "assistant", "timestamp": moment + 1000,
                                      "content": [{"type": "text", "text": "done"}]}})  # fmt: skip
            parent = aid
            made += 1
        stamp = iso(at).replace(":", "-").replace(".", "-")
        (folder / f"{stamp}_{sid}.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
        n += 1


async def run(records: int, events: int, prompts: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="memevo-bench-turns-"))
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")
    os.environ["XDG_STATE_HOME"] = str(work / "state")
    t = time.perf_counter()
    db = build_with_history(work / "memory.sqlite", records, events)
    write_sessions(work / "sessions", prompts)
    print(f"built {records:,} records, {events:,} events, {prompts:,} prompts "
          f"in {time.perf_counter() - t:.1f} s")  # fmt: skip
    found = [session_prompts(f) for f in session_files(work / "sessions")]
    asked = [p for s in found for p in s.prompts]
    clock = fixed_clock(iso(NOW_MS))

    store = await MemoryStore.open(db, read_only=True, clock=clock)
    t = time.perf_counter()
    from store.recall.index import RecallIndex

    index = RecallIndex((await store.load_memories()).memories)
    for p in asked:
        index.recall(p.text, purpose="inject", recent_user_turns=p.recent)
    floor = time.perf_counter() - t
    await store.close()
    print(f"floor: one plain recall per prompt on today's store: {floor:.2f} s")

    from memevo_tui.core.recallcache import TurnCache

    for label in ("cold", "warm"):
        store = await MemoryStore.open(db, read_only=True, clock=clock)
        t = time.perf_counter()
        turns = await replay_turns(store, asked, TurnCache(db))
        took = time.perf_counter() - t
        await store.close()
        got = sum(1 for x in turns if x.then)
        print(f"{label} replay: {took:.2f} s ({took / floor:.1f}x the floor); "
              f"{got} of {len(turns)} got memories then")  # fmt: skip

    from memevo_tui.core.recallcache import SessionIndexCache
    from memevo_tui.core.turnlog import load_turns

    for label in ("first open (indexes the session files)", "warm open"):
        first: list[float] = []
        t = time.perf_counter()

        def early(found: object, first: list[float] = first, t: float = t) -> None:
            first.append(time.perf_counter() - t)

        cache = SessionIndexCache()
        await load_turns(db, clock, work / "sessions", cache, None, early)
        took = time.perf_counter() - t
        rows = f"rows in {first[0]:.2f} s" if first else "no early rows"
        verdict = ("met" if first and first[0] <= 0.5 else "MISSED") if label == "warm open" else ""
        print(f"{label}: {rows} (goal 0.5 s: {verdict or 'n/a'}), checked in {took:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=30_000)
    parser.add_argument("--prompts", type=int, default=1_000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.records, args.events, args.prompts = 2_000, 6_000, 200
    asyncio.run(run(args.records, args.events, args.prompts))


if __name__ == "__main__":
    main()
