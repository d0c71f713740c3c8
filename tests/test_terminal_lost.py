"""The terminal goes away (an ssh drop, tmux kill-session): the process ends.

Textual's driver kept the process alive for good: its output thread died on the
first refused write and the event loop then blocked on the thread's full queue.
"""

from __future__ import annotations

import errno
import io
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from ptyrun import ROOT, PtyRun

from memevo_tui.app import MemevoApp
from memevo_tui.term.guarded import EXIT_TERMINAL_LOST, GuardedDriver, GuardedWriter

from conftest import FIXTURE_NOW, FIXTURES

PI_WRITER = """
import asyncio, sys
from store import MemoryStore

async def main(path: str) -> None:
    store = await MemoryStore.open(path)
    pinned = False
    while True:  # pi committing ten times a second: the dashboard repaints each
        await (store.unpin if pinned else store.pin)("a100f0dec266627497b0e637")
        pinned = not pinned
        await asyncio.sleep(0.1)

asyncio.run(main(sys.argv[1]))
"""


class Refusing(io.StringIO):
    """A terminal that hung up: every write fails with EIO."""

    def __init__(self) -> None:
        super().__init__()
        self.tries = 0

    def write(self, text: str) -> int:
        self.tries += 1
        raise OSError(errno.EIO, "Input/output error")


def test_the_output_thread_outlives_a_refused_write_and_never_blocks_a_writer() -> None:
    lost: list[int] = []
    writer = GuardedWriter(Refusing())
    writer.on_lost = lambda: lost.append(1)
    writer.start()
    done = threading.Event()

    def flood() -> None:  # far more than the queue holds (30)
        for _ in range(1_000):
            writer.write("\x1b[2J" * 100)
        done.set()

    threading.Thread(target=flood, daemon=True).start()
    assert done.wait(60), "a write blocked on the output queue"
    writer.stop()
    assert not writer.is_alive()
    assert lost == [1] and writer.lost.is_set()


@pytest.mark.unit  # Textual's driver's signal handlers
async def test_sigcont_resumes_only_what_ctrl_z_suspended(
    realistic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = MemevoApp(realistic)
    before = {s: signal.getsignal(s) for s in (signal.SIGTSTP, signal.SIGCONT)}
    try:
        driver = GuardedDriver(app)
        resumed: list[int] = []
        driver.resume_application_mode = lambda: resumed.append(1)  # type: ignore[method-assign]
        driver._sigcont_application()  # a hang-up's SIGCONT: nothing was suspended
        assert resumed == []
        suspended: list[int] = []
        driver.suspend_application_mode = lambda: suspended.append(1)  # type: ignore[method-assign]
        stopped: list[tuple[int, int]] = []
        monkeypatch.setattr(os, "kill", lambda pid, sig: stopped.append((pid, sig)))
        driver._sigtstp_application()  # ctrl+z
        assert suspended == [1] and stopped == [(os.getpid(), signal.SIGSTOP)]
        driver._sigcont_application()  # fg
        driver._sigcont_application()  # a second SIGCONT resumes nothing more
        assert resumed == [1]
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _hang_up_while_busy(tmp_path: Path, i: int, *, controlling: bool) -> tuple[int, str]:
    directory = tmp_path / f"run{i}"
    directory.mkdir()
    db = directory / "memory.sqlite"
    shutil.copyfile(FIXTURES / "realistic.sqlite", db)
    db.chmod(0o600)
    env = {"MEMEVO_NOW": FIXTURE_NOW, "XDG_STATE_HOME": str(directory / "state")}
    pi = subprocess.Popen(
        [sys.executable, "-c", PI_WRITER, str(db)], cwd=ROOT, stderr=subprocess.DEVNULL
    )
    try:
        run = PtyRun("--db", str(db), env=env, controlling=controlling)
        assert run.read_until(b"shown of"), run.text[-2000:]
        run.pump(random.uniform(0.2, 0.8))  # the dashboard repaints pi's commits meanwhile
        os.close(run.master)  # the terminal goes away
        try:
            code = run.proc.wait(timeout=30)  # a hang is for ever: 30 s is no speed check
        except subprocess.TimeoutExpired:
            run.proc.kill()
            run.proc.wait()
            return -1, "still running 30 s after its terminal went away"
        return code, ""
    finally:
        pi.kill()
        pi.wait()


@pytest.mark.parametrize("controlling", [True, False], ids=["hung-up", "refusing-io"])
@pytest.mark.parametrize("part", range(2))
def test_the_process_ends_when_its_terminal_goes_away(
    tmp_path: Path, controlling: bool, part: int
) -> None:
    """Ten runs each, twenty in all (in parts of five, which the parallel suite
    spreads): with the pty as the controlling terminal, closing its master brings
    SIGHUP and SIGCONT as a dropped ssh session does; without, the app meets only
    refused writes and an end of file."""
    outcomes = [_hang_up_while_busy(tmp_path, i, controlling=controlling) for i in range(5)]
    assert outcomes == [(EXIT_TERMINAL_LOST, "")] * 5


def test_sighup_to_a_live_terminal_still_restores_it(realistic: Path) -> None:
    """Kept from the signal tests: a SIGHUP sent by hand is not a lost terminal."""
    run = PtyRun("--db", str(realistic), env={"MEMEVO_NOW": FIXTURE_NOW}, controlling=True)
    assert run.read_until(b"shown of"), run.text[-2000:]
    entered = len(run.output)
    run.signal(signal.SIGHUP)
    assert run.finish() == EXIT_TERMINAL_LOST
    assert b"\x1b[?1049l" in run.output[entered:]
