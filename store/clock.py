"""Injectable clocks. A clock returns the current time in epoch milliseconds."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from .js import parse_ms

Clock = Callable[[], float]

NOW_ENV = "MEMEVO_NOW"


def system_clock() -> float:
    return time.time() * 1000.0


def fixed_clock(instant: str) -> Clock:
    """A clock frozen at an ISO 8601 instant."""
    ms = parse_ms(instant)
    if ms is None:
        raise ValueError(f"not an ISO 8601 instant: {instant!r}")
    return lambda: ms


def clock_from_env(environ: dict[str, str] | None = None) -> Clock:
    """``MEMEVO_NOW`` fixes the clock; otherwise the system clock."""
    env = os.environ if environ is None else environ
    value = env.get(NOW_ENV, "").strip()
    return fixed_clock(value) if value else system_clock
