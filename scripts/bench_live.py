"""Benchmark: from another process's commit to the change on screen, and idle CPU.

A writer process (standing in for pi) pins or unpins one record on request and
reports the wall-clock time right after its COMMIT. The dashboard runs headless
in this process; for each of 100 commits we wait until the memory list has
redrawn that record in its new state. Then the dashboard sits idle (polling the
change signal) for a few seconds and we report the process CPU it used.

Goals (issue 5): p95 latency at most 300 ms; CPU while idle near zero.

    python scripts/bench_live.py [--commits 100] [--idle 5]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memevo_tui.app import MemevoApp  # noqa: E402
from memevo_tui.widgets.memory_list import MemoryList  # noqa: E402
from store import Memory, system_clock  # noqa: E402
from store.demo import build_demo_async  # noqa: E402

WRITER = textwrap.dedent(
    """
    import asyncio, sys, time
    from store import MemoryStore

    async def main(path, memory_id):
        async with await MemoryStore.open(path) as store:
            pinned = False
            for line in sys.stdin:
                if line.strip() != "go":
                    break
                await (store.unpin if pinned else store.pin)(memory_id)
                pinned = not pinned
                print(time.time(), flush=True)

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


async def run(commits: int, idle_seconds: float) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp())
    try:
        path = await build_demo_async(tmp / "memory.sqlite", now_ms=system_clock())
        app = MemevoApp(path, clock=system_clock, keymap={})
        drawn: dict[str, float] = {}
        original = MemoryList.render_line

        def render_line(widget: MemoryList, y: int) -> Any:
            strip = original(widget, y)
            index = round(widget.scroll_offset.y) + y - 1
            if y >= 1 and 0 <= index < len(widget.rows):
                r = widget.rows[index]
                if isinstance(r, Memory):
                    drawn[f"{r.id}:{r.layer}"] = time.time()
            return strip

        MemoryList.render_line = render_line  # type: ignore[method-assign]
        latencies: list[float] = []
        rng = random.Random(5)
        async with app.run_test(size=(160, 50)) as pilot:
            while not app.state.loaded:
                await pilot.pause(0.02)
            memory_list = app.query_one("#memory-list", MemoryList)
            target = memory_list.rows[0]
            assert isinstance(target, Memory)
            writer = subprocess.Popen(
                [sys.executable, "-c", WRITER, str(path), target.id],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            )
            assert writer.stdin is not None and writer.stdout is not None
            layer = target.layer
            for _ in range(commits):
                layer = "durable" if layer == "pinned" else "pinned"
                key = f"{target.id}:{layer}"
                drawn.pop(key, None)
                # commit at a random point of the poll cycle, as pi would
                await asyncio.sleep(rng.uniform(0, 0.25))
                writer.stdin.write("go\n")
                writer.stdin.flush()
                committed = float(await asyncio.to_thread(writer.stdout.readline))
                while key not in drawn or drawn[key] < committed:
                    await asyncio.sleep(0.001)
                latencies.append(drawn[key] - committed)
            writer.stdin.write("stop\n")
            writer.stdin.flush()
            writer.wait(timeout=30)
            await pilot.pause(0.5)
            cpu0, wall0 = time.process_time(), time.perf_counter()
            await asyncio.sleep(idle_seconds)
            cpu = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
        MemoryList.render_line = original  # type: ignore[method-assign]
        return {"latencies": latencies, "idle_cpu": cpu}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--idle", type=float, default=5.0)
    args = parser.parse_args()
    result = asyncio.run(run(args.commits, args.idle))
    ms = sorted(x * 1000 for x in result["latencies"])
    p95 = ms[max(0, int(len(ms) * 0.95) - 1)]
    print(f"commits measured        : {len(ms)}")
    verdict = "met" if p95 <= 300 else "MISSED"
    print(
        f"commit -> on screen     : median {statistics.median(ms):.0f} ms, p95 {p95:.0f} ms, "
        f"max {ms[-1]:.0f} ms (goal p95 <= 300 ms: {verdict})"
    )
    print(f"CPU while idle          : {result['idle_cpu'] * 100:.1f}% of one core "
          f"over {args.idle:.0f} s (polling every 200 ms)")  # fmt: skip


if __name__ == "__main__":
    main()
