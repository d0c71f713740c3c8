"""A process on a 160x50 pseudo-terminal, as the benchmarks run the dashboard (and
their baselines) where a user would feel it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import struct
import subprocess
import termios
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROWS, COLUMNS = 50, 160


@contextlib.contextmanager
def on_pty(
    command: list[str], env: Mapping[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """``command`` started on a new 160x50 pseudo-terminal (``env`` added to this
    process's): the process and the terminal's side to read; afterwards it is
    ended (terminated, killed if it lingers) and the terminal closed."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    full_env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(COLUMNS),
                "LINES": str(ROWS), **(env or {})}  # fmt: skip
    try:
        app = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, cwd=ROOT,
                               env=full_env, start_new_session=True)  # fmt: skip
    finally:
        os.close(slave)
    try:
        yield app, master
    finally:
        if app.poll() is None:
            app.terminate()
        try:
            app.wait(timeout=10)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait()
        os.close(master)


def drain(master: int) -> None:
    """Read (and throw away) what the process writes, as a terminal would, in a thread
    of its own until the terminal closes."""

    def run() -> None:
        while True:
            try:
                if not os.read(master, 1 << 16):
                    return
            except OSError:
                return

    threading.Thread(target=run, daemon=True).start()
