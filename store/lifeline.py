"""A child process that ends when the process that started it dies.

A worker of a first recall build, or a browser tab's dashboard, has no use once its
parent is gone: left running, it is an orphan under init, polling or waiting for
ever. Linux sends it a chosen signal when its parent dies (``PR_SET_PDEATHSIG``);
elsewhere a thread watches the parent's pid. No Textual, no third-party imports.
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading

PR_SET_PDEATHSIG = 1
WATCH_EVERY_S = 1.0
"""How often the fallback thread looks at the parent's pid."""


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """Be sent ``sig`` when the parent process dies, and at once if it already has."""
    parent = os.getppid()
    if not _linux_death_signal(sig):
        threading.Thread(target=_watch, args=(parent, sig), name="lifeline", daemon=True).start()
    if parent == 1 or os.getppid() != parent:  # it died before the signal was asked for
        os.kill(os.getpid(), sig)


def _linux_death_signal(sig: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0)
    except (OSError, AttributeError, TypeError):
        return False


def _watch(parent: int, sig: int) -> None:
    stop = threading.Event()
    while not stop.wait(WATCH_EVERY_S):
        if os.getppid() != parent:
            os.kill(os.getpid(), sig)
            return
