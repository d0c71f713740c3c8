"""A pool of worker processes started whole and kept quiet: for a first build of the
recall words (``wordcache.WordCache.fill``), where a signal or a worker's failure must
never leave a process running or print over the user's shell."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.pool import Pool

_HELD = {getattr(signal, n) for n in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, n)}


@contextlib.contextmanager
def started_whole(start: Callable[[], Pool]) -> Iterator[Pool]:
    """The pool ``start()`` makes, started with SIGTERM, SIGHUP and SIGINT held (a
    signal taken while a pool starts would leave a worker half started, waiting for
    what it was never sent) and entered before they are let through: a signal held is
    taken inside the pool's own block, so the pool is terminated, never left running
    while this process leaves. Held by handlers that note the signal, not by a mask:
    another thread (a database connection's) would take a masked one for the process."""
    held: list[int] = []
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in _HELD:
            previous[sig] = signal.signal(sig, lambda signum, _frame: held.append(signum))

    def let_through() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        previous.clear()
        for sig in held[:1]:
            signal.raise_signal(sig)

    try:
        pool = start()
    except BaseException:
        let_through()
        raise
    with pool:
        let_through()
        yield pool


@contextlib.contextmanager
def children_quiet() -> Iterator[None]:
    """While the pool lives, the processes it starts (a replacement too) write nothing
    to the terminal: their standard error is the null device, this process's own
    (``sys.stderr``: the progress line) still the terminal. A pool cut short by a
    signal must not print a worker's traceback over the user's shell; a worker's
    failure reaches this process as the exception of its part."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield
        return
    old = sys.stderr
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)
        sys.stderr = os.fdopen(os.dup(saved), "w", buffering=1,
                               encoding=getattr(old, "encoding", None) or "utf-8",
                               errors="backslashreplace")  # fmt: skip
        yield
    finally:
        if sys.stderr is not old:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.close()
            sys.stderr = old
        os.dup2(saved, 2)
        os.close(saved)
