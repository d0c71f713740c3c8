"""Run the README's quick-start commands exactly as written (CI runs this).

    python3 scripts/readme_quickstart.py [--dry-run]

The first command makes the virtual environment and opens the dashboard on a
demo store: it runs in a pseudo-terminal, and once the memory list is on screen
`q` is pressed, as a user would. The second (the test suite) is printed for
.ci/run to run next. Exit 0 when the first command worked, 1 when it did not.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ESCAPES = re.compile(
    rb"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]"  # CSI
    rb"|\][^\x07\x1b]*(\x07|\x1b\\)"  # OSC
    rb"|[PX^_][^\x1b]*\x1b\\"  # DCS, SOS, PM, APC
    rb"|.)"
)
LOADED = b"shown of "  # the memory list's status line: "N shown of M"
TIMEOUT_S = 600  # the install downloads packages; a hang fails, nothing is timed


def quick_start(readme: str) -> list[str]:
    """The commands in the code blocks of the README's "Quick start" section."""
    section = readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S)]


def run_in_terminal(command: str) -> int:
    pid, fd = pty.fork()
    if pid == 0:  # the child: a login-like shell in the repository, 120×40
        os.chdir(ROOT)
        os.environ["TERM"] = "xterm-256color"
        os.execvp("bash", ["bash", "-c", command])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    seen = b""
    pressed = False
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed the terminal: it has ended
            break
        if not data:
            break
        seen = (seen + data)[-200_000:]
        if not pressed and LOADED in ESCAPES.sub(b"", seen):
            os.write(fd, b"q")
            pressed = True
    else:
        os.kill(pid, signal.SIGKILL)
        print("readme quick start: the first command did not finish", file=sys.stderr)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if not pressed:
        tail = ESCAPES.sub(b"", seen)[-2000:].decode("utf-8", "replace")
        print(f"readme quick start: the dashboard never showed its list:\n{tail}", file=sys.stderr)
        return 1
    return code


def main() -> int:
    commands = quick_start((ROOT / "README.md").read_text(encoding="utf-8"))
    if len(commands) != 2:
        print(f"readme quick start: expected 2 commands, found {len(commands)}", file=sys.stderr)
        return 1
    first, second = commands
    if "--dry-run" in sys.argv:
        print(first)
        print(second)
        return 0
    code = run_in_terminal(first)
    if code != 0:
        print(f"readme quick start: `{first}` exited {code}", file=sys.stderr)
        return 1
    print(f"readme quick start: `{first}` opened the dashboard, and q closed it", file=sys.stderr)
    print(second)
    return 0


if __name__ == "__main__":
    sys.exit(main())
