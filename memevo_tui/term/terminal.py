"""The terminal the dashboard runs in: the driver to run it with, and the signals that
end it as q does (pasted text is made safe in ``paste.py``).

In a terminal the dashboard runs on ``guarded.GuardedDriver`` (Linux and macOS),
which also ends the process when the terminal goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from typing import TYPE_CHECKING, Any

from textual import constants

from .compat.textual import driver_of

if TYPE_CHECKING:
    from textual.app import App
    from textual.driver import Driver


def driver() -> type[Driver] | None:
    """The driver to run the dashboard in a terminal with: ``GuardedDriver`` where
    Textual would use its Linux driver (Linux and macOS), else Textual's own choice."""
    if constants.DRIVER is not None or sys.platform == "win32":
        return None
    from .guarded import GuardedDriver, install

    install()
    return GuardedDriver


def leave_on_signals(app: App[Any]) -> None:
    """SIGTERM ends ``app`` as q does, so the terminal is restored; so does SIGHUP sent
    to a live terminal, while on a terminal that hung up the driver ends the process
    without writing to it (``guarded.GuardedDriver``). Exit code: 128 + the signal."""
    loop = asyncio.get_running_loop()

    def taken(sig: int) -> None:
        hang_up = getattr(driver_of(app), "hang_up", None)
        if sig == getattr(signal, "SIGHUP", None) and hang_up is not None:
            hang_up()
        else:
            app.exit(return_code=128 + sig)

    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            with contextlib.suppress(NotImplementedError):  # Windows: no such handlers
                loop.add_signal_handler(sig, taken, sig)
