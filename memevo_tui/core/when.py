"""Reading a moment for the time dial: a date, an instant, or an offset from now.

``2026-12-15`` (UTC midnight), ``2026-12-15T09:30:00Z``, ``+30d``, ``-1w``,
``+12h``, ``+2mo``, ``+1y``; ``now`` (or ``0``) is now. No Textual here.
"""

from __future__ import annotations

import re

from store import iso, parse_ms

DAY_MS = 86_400_000
UNITS = {"h": DAY_MS / 24, "d": DAY_MS, "w": 7 * DAY_MS, "mo": 30.44 * DAY_MS, "y": 365.25 * DAY_MS}
OFFSET = re.compile(r"^([+-])\s*(\d+(?:\.\d+)?)\s*(h|d|w|mo|y)$", re.ASCII | re.IGNORECASE)
FIRST_MS = -62_135_596_800_000.0
"""0001-01-01T00:00:00.000Z: the first moment a date is written for (four-digit years)."""
LAST_MS = 253_402_300_799_999.0
"""9999-12-31T23:59:59.999Z: the last."""
RANGE = "0001-01-01 and 9999-12-31"
HELP = "a date (2026-12-15), an instant (2026-12-15T09:30:00Z) or an offset (+30d, -1w, +12h)"


class BadMoment(ValueError):
    """The text is not a moment (the message says what is expected)."""


def parse_moment(text: str, now_ms: float) -> float | None:
    """Epoch ms of the moment ``text`` names, or None for now (raises ``BadMoment``)."""
    value = text.strip()
    if not value:
        raise BadMoment(f"an empty moment: give {HELP}, or now")
    if value.lower() in ("now", "0"):
        return None
    match = OFFSET.match(value)
    if match:
        sign, amount, unit = match.groups()
        delta = float(amount) * UNITS[unit.lower()]
        ms = now_ms + (delta if sign == "+" else -delta)
    else:
        found = parse_ms(value)
        if found is None:
            raise BadMoment(f"{value!r} is not a moment: give {HELP}")
        ms = found
    if not FIRST_MS <= ms <= LAST_MS:  # inf and nan too
        raise BadMoment(f"{value!r} is out of range: a moment is between {RANGE}")
    return ms


def moment(ms: float) -> str:
    """``2026-12-15 09:30 UTC``."""
    return iso(ms)[:16].replace("T", " ") + " UTC"
