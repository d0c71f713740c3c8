"""Run memevo-tui on a pseudo-terminal, as a user's terminal would, and read what it drew."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESTORE = (b"\x1b[?1049l", b"\x1b[?25h")
"""What a terminal needs to be usable again: the main screen back, the cursor shown."""
MOUSE_ON = b"\x1b[?1000h"
MOUSE_OFF = b"\x1b[?1000l"


def _take_the_terminal() -> None:
    """In the child, a new session's leader: stdin's pty becomes its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtyRun:
    """``python -m memevo_tui ARGS`` with its stdin, stdout and stderr on a pty."""

    def __init__(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        size: tuple[int, int] = (120, 40),
        controlling: bool = False,
    ) -> None:
        """``controlling``: the pty becomes the program's controlling terminal, as a
        terminal emulator's or sshd's is, so closing its master hangs it up (SIGHUP)."""
        self.master, slave = pty.openpty()
        cols, rows = size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        full_env = {
            **os.environ,
            "TERM": "xterm-256color",
            "COLUMNS": str(cols),
            "LINES": str(rows),
        }
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memevo_tui", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=ROOT,
            env=full_env,
            start_new_session=True,
            preexec_fn=_take_the_terminal if controlling else None,
        )
        os.close(slave)
        self.output = b""

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # the child closed the terminal
            return False
        if not chunk:
            return False
        self.output += chunk
        return True

    def read_until(self, needle: bytes, timeout: float = 60.0) -> bool:
        """Read until ``needle`` was drawn; False if the program ended or time ran out."""
        deadline = time.monotonic() + timeout
        while needle not in self.output:
            if time.monotonic() > deadline or not self._read(0.1):
                return needle in self.output
        return True

    def pump(self, seconds: float) -> None:
        """Read what the program draws for ``seconds`` (it goes on drawing meanwhile)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self._read(min(0.05, seconds)):
            pass

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def signal(self, sig: signal.Signals) -> None:
        self.proc.send_signal(sig)

    def finish(self, timeout: float = 60.0) -> int:
        """Read to the end and wait; the exit status (negative: killed by that signal)."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.1)
        while self._read(0.05) and len(self.output) < 50_000_000:
            if not select.select([self.master], [], [], 0)[0]:
                break
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"memevo-tui did not exit within {timeout:.0f} s")
        os.close(self.master)
        return self.proc.returncode

    @property
    def text(self) -> str:
        return self.output.decode("utf-8", "replace")
