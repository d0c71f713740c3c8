"""An editor running (``e``) never holds the app: SIGTERM, SIGHUP and a lost terminal
end it and the app, as they would with no editor open."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest
from ptyrun import PtyRun

from conftest import FIXTURE_NOW

# An editor that takes its time, and shrugs off the hang-up as vim does for a while.
EDITOR = textwrap.dedent(
    """
    import os, signal, sys, time
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    open(sys.argv[1], "w").write(str(os.getpid()))
    time.sleep(120)
    """
)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie (not yet reaped by its parent, now gone) has ended too
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
def test_a_signal_while_the_editor_runs_ends_it_and_the_app(
    realistic: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    script = tmp_path / "slow_editor.py"
    script.write_text(EDITOR)
    pidfile = tmp_path / "editor.pid"
    editor = f"{sys.executable} {script} {pidfile}"  # then the file to edit
    run = PtyRun("--db", str(realistic), env={"MEMEVO_NOW": FIXTURE_NOW, "VISUAL": editor},
                 controlling=True)  # fmt: skip
    assert run.read_until(b"shown of"), run.text[-2000:]
    deadline = time.monotonic() + 60
    while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
        # e again while "No memory selected" (the cursor not yet on the first record)
        run.send(b"e")
        for _ in range(30):
            run.pump(0.1)
            if pidfile.exists() and pidfile.read_text():
                break
    assert pidfile.exists(), run.text[-2000:]
    editor_pid = int(pidfile.read_text())
    run.signal(sig)
    code = run.finish(timeout=30)  # 120 s if the editor were waited for
    assert code == 128 + sig
    deadline = time.monotonic() + 10
    while not gone(editor_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(editor_pid)
