"""The store's ``-shm`` file deleted while a connection is open: pi's next commits go
through a new index this connection never sees, and its checkpoint on close would
throw them away. The connection notices, stops, and closes without a checkpoint."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from store import MemoryStore, Replaced

PI_COMMITS = 59

PI = textwrap.dedent(
    """
    import json, sqlite3, sys, uuid
    # What pi does for a new memory: one memory row and one event, in BEGIN IMMEDIATE.
    con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
    con.execute("PRAGMA journal_mode=WAL")
    scope, data = con.execute("SELECT scope, data FROM memories LIMIT 1").fetchone()
    for i in range(int(sys.argv[2])):
        record = json.loads(data)
        record["id"] = uuid.uuid4().hex[:24]
        record["content"] = f"A memory pi learned while the -shm file was gone ({i})"
        con.execute("BEGIN IMMEDIATE")
        con.execute("INSERT INTO memories (id, scope, hash, data) VALUES (?, ?, ?, ?)",
                    (record["id"], scope, "x" * 64, json.dumps(record)))
        event = {"id": str(uuid.uuid4()), "at": record["updatedAt"], "actor": "model",
                 "reason": "learned", "before": [None], "after": [record]}
        con.execute("INSERT INTO events (id, scope, data) VALUES (?, ?, ?)",
                    (event["id"], scope, json.dumps(event)))
        con.execute("COMMIT")
    con.close()
    print("pi done")
    """
)


def rows(path: Path) -> int:
    con = sqlite3.connect(path)
    try:
        return int(con.execute("SELECT count(*) FROM memories").fetchone()[0])
    finally:
        con.close()


async def test_pi_s_commits_survive_a_deleted_shm_file(
    realistic: Path, fixture_clock: Callable[[], float]
) -> None:
    store = await MemoryStore.open(realistic, clock=fixture_clock)
    try:
        before = len((await store.load_memories()).memories)
        shm = realistic.with_name(realistic.name + "-shm")
        assert shm.exists()
        shm.unlink()
        problem = store.file_problem()
        assert problem is not None and "-shm" in problem and "deleted" in problem
        pi = subprocess.run([sys.executable, "-c", PI, str(realistic), str(PI_COMMITS)],
                            capture_output=True, text=True, timeout=60)  # fmt: skip
        assert pi.returncode == 0 and "pi done" in pi.stdout, pi.stderr
        problem = store.file_problem()
        assert problem is not None and "-shm" in problem and "replaced" in problem
        with pytest.raises(Replaced):
            store.check_file()
    finally:
        await store.close()
    assert rows(realistic) == before + PI_COMMITS
    con = sqlite3.connect(realistic)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()


async def test_the_dashboard_says_so_and_q_keeps_pi_s_commits(realistic: Path) -> None:
    """The issue's steps: an idle dashboard, ``rm -shm``, pi commits, ``q``."""
    from apphelpers import opened, until

    async with opened(realistic) as (app, pilot):
        before = rows(realistic)
        realistic.with_name(realistic.name + "-shm").unlink()
        pi = subprocess.run([sys.executable, "-c", PI, str(realistic), str(PI_COMMITS)],
                            capture_output=True, text=True, timeout=60)  # fmt: skip
        assert pi.returncode == 0, pi.stderr
        await until(pilot, lambda: "-shm" in (app.state.failure or ""), "the live poll")
        assert "index of the store's write-ahead log" in (app.state.failure or "")
        await pilot.press("q")
    assert rows(realistic) == before + PI_COMMITS
