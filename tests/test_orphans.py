"""Nothing a process started outlives it: a CLI verb's worker processes end with it,
and a browser tab's dashboard ends with the server that started it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXTURE_NOW, ROOT

sys.path.insert(0, str(ROOT / "scripts"))


def session_members(sid: int) -> list[tuple[int, str]]:
    """The live processes (not zombies) of session ``sid``: pid and name."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name_end = stat.rindex(")")
        fields = stat[name_end + 2 :].split()
        state, session = fields[0], int(fields[3])
        if session == sid and state != "Z":
            found.append((int(entry.name), stat[stat.index("(") + 1 : name_end]))
    return found


def wait_for(condition: object, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return bool(condition())  # type: ignore[operator]


@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=["sigterm", "sighup", "ctrl-c"]
)
def test_a_signal_to_search_while_it_reads_words_in_workers_leaves_nothing_behind(
    tmp_path: Path, sig: signal.Signals
) -> None:
    from synthetic import build_synthetic

    store = build_synthetic(tmp_path / "big.sqlite", 12_000)
    env = {**os.environ, "MEMEVO_NOW": FIXTURE_NOW, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memevo_tui", "search", "postgres", "--db", str(store)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    try:
        # the workers (and multiprocessing's resource tracker) are running
        assert wait_for(lambda: len(session_members(proc.pid)) >= 3, 60), session_members(proc.pid)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 128 + sig, err
        assert b"Traceback" not in err, err.decode()
        assert wait_for(lambda: session_members(proc.pid) == [], 10), session_members(proc.pid)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid, _ in session_members(proc.pid):
            os.kill(pid, signal.SIGKILL)


class _Leaving(Exception):
    pass


def test_a_signal_taken_by_another_thread_while_a_pool_starts_ends_the_pool() -> None:
    """A signal to the process while its worker pool starts is delivered to whichever
    thread does not block it (a database connection's): it must still be taken inside
    the pool's block, so the pool is terminated, never lost as its start is cut short."""
    import threading

    from store.recall.pool import started_whole

    seen: list[str] = []

    class Pool:
        def __enter__(self) -> Pool:
            seen.append("entered")
            return self

        def __exit__(self, *exc: object) -> None:
            seen.append("terminated")

    def start() -> Pool:
        # another thread signals the process mid-start, and is still alive after it
        done = threading.Event()

        def signal_then_wait() -> None:
            os.kill(os.getpid(), signal.SIGTERM)
            done.wait(5)

        signaller = threading.Thread(target=signal_then_wait, daemon=True)
        signaller.start()
        for _ in range(10_000):  # bytecode boundaries where a handler would run
            pass
        time.sleep(0.05)
        done.set()
        signaller.join()
        seen.append("started")
        return Pool()

    def leave(signum: int, _frame: object) -> None:
        raise _Leaving

    previous = signal.signal(signal.SIGTERM, leave)
    try:
        with pytest.raises(_Leaving), started_whole(start):  # type: ignore[arg-type]
            seen.append("worked")
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == ["started", "entered", "terminated"]
    assert signal.getsignal(signal.SIGTERM) is previous
